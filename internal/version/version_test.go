package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuild(t *testing.T) {
	vcs := func(rev, when, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: when}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name string
		s    stamps
		bi   *debug.BuildInfo
		want Info
	}{
		{
			name: "release build: the stamps win over what Go recorded",
			s:    stamps{version: "v0.1.0", commit: "abc", date: "2026-12-01T10:00:00Z"},
			bi:   &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: vcs("def", "2026-01-01T00:00:00Z", "true")},
			want: Info{Version: "v0.1.0", Commit: "abc", Date: "2026-12-01T10:00:00Z", Go: "go1.26.0", ClientGo: Unknown},
		},
		{
			name: "go build in a checkout: devel, with the commit Go saw, marked dirty",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: vcs("def", "2026-01-01T00:00:00Z", "true")},
			want: Info{Version: Devel, Commit: "def-dirty", Date: "2026-01-01T00:00:00Z", Go: "go1.26.0", ClientGo: Unknown},
		},
		{
			name: "go install module@version: Go's module version",
			bi: &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.2.0"}, Deps: []*debug.Module{
				{Path: "k8s.io/api", Version: "v0.37.2"}, {Path: ClientGoModule, Version: "v0.37.2"},
			}},
			want: Info{Version: "v0.2.0", Commit: Unknown, Date: Unknown, Go: "go1.26.0", ClientGo: "v0.37.2"},
		},
		{
			name: "no build info at all: nothing guessed",
			want: Info{Version: Devel, Commit: Unknown, Date: Unknown, Go: "go-runtime", ClientGo: Unknown},
		},
		{
			name: "client-go replaced: the version actually built",
			bi: &debug.BuildInfo{Deps: []*debug.Module{
				{Path: ClientGoModule, Version: "v0.37.2", Replace: &debug.Module{Path: ClientGoModule, Version: "v0.37.3"}},
			}},
			want: Info{Version: Devel, Commit: Unknown, Date: Unknown, Go: "go-runtime", ClientGo: "v0.37.3"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fromBuild(tc.s, tc.bi, "go-runtime"); got != tc.want {
				t.Errorf("fromBuild = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestGetOfThisTestBinary(t *testing.T) {
	got := Get()
	if got.Version == "" || got.Commit == "" || got.Go == "" || got.Date == "" || got.ClientGo == "" {
		t.Errorf("Get() left a fact empty: %+v", got)
	}
}
