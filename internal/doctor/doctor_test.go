package doctor

import (
	"bytes"
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/dockerhost"
)

func healthy() Facts {
	return Facts{EngineVersion: "20.10.24", PrivilegedProbe: "ok", FreeDiskBytes: 50 * gib, AvailMemBytes: 20 * gib,
		InotifyWatches: 524288, InotifyInstances: 512, GoVersion: "go1.26.8"}
}

func statusOf(cs []Check, name string) Check {
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	return Check{}
}

func TestDecide(t *testing.T) {
	cases := []struct {
		name   string
		change func(*Facts)
		check  string
		want   Status
		fixHas string
	}{
		{"healthy engine", func(*Facts) {}, "docker engine", Pass, ""},
		{"no engine, provisionable", func(f *Facts) { f.EngineVersion, f.CanProvision, f.PrivilegedProbe = "", true, "" }, "docker engine", Fail, "cluster:up"},
		{"no engine, not root", func(f *Facts) {
			f.EngineVersion, f.CanProvision, f.ProvisionWhy, f.PrivilegedProbe = "", false, "not root: install Docker", ""
		}, "docker engine", Fail, "not root"},
		{"slow engine, provisionable", func(f *Facts) {
			f.EngineVersion, f.EngineState, f.CanProvision, f.PrivilegedProbe = "", dockerhost.EngineUnresponsive, true, ""
		}, "docker engine", Fail, "will not start a second engine"},
		{"engine refuses", func(f *Facts) {
			f.EngineVersion, f.EngineState, f.CanProvision, f.PrivilegedProbe = "", dockerhost.EngineRefuses, true, ""
		}, "docker engine", Fail, "will not start a second engine"},
		{"no engine, host changes declined", func(f *Facts) {
			f.EngineVersion, f.CanProvision, f.NoHostChanges, f.PrivilegedProbe = "", true, true, ""
		}, "docker engine", Fail, "TERMLAB_NO_HOST_CHANGES is set, so cluster:up will not install"},
		{"probe failed, caps missing", func(f *Facts) {
			f.PrivilegedProbe, f.MissingCaps = "unable to apply caps", []string{"CAP_SYS_RESOURCE"}
		}, "privileged containers", Fail, "termlab-runc"},
		{"caps missing, wrapper default", func(f *Facts) {
			f.PrivilegedProbe, f.MissingCaps, f.WrapperDefault = "", []string{"CAP_SYS_RESOURCE"}, true
		}, "privileged containers", Pass, ""},
		{"caps missing, foreign engine", func(f *Facts) { f.PrivilegedProbe, f.MissingCaps = "", []string{"CAP_SYS_RESOURCE"} }, "privileged containers", Fail, "default runtime"},
		{"cgroup v1", func(f *Facts) { f.CgroupV1 = true }, "cgroups", Warn, ""},
		{"low disk", func(f *Facts) { f.FreeDiskBytes = 2 * gib }, "free disk", Fail, "8 GiB"},
		{"low memory", func(f *Facts) { f.AvailMemBytes = gib }, "memory", Fail, ""},
		{"low inotify", func(f *Facts) { f.InotifyWatches = 8192 }, "inotify limits", Warn, "sysctl"},
		{"offline without go", func(f *Facts) { f.GoVersion = "" }, "go toolchain", Fail, "Go"},
		{"registry online", func(f *Facts) { f.RegistryResolves = true }, "registry", Pass, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := healthy()
			tc.change(&f)
			c := statusOf(Decide(f), tc.check)
			if c.Status != tc.want {
				t.Fatalf("%s: status %s (%s), want %s", tc.check, c.Status, c.Detail, tc.want)
			}
			if !strings.Contains(c.Fix, tc.fixHas) {
				t.Fatalf("fix %q lacks %q", c.Fix, tc.fixHas)
			}
		})
	}
}

func TestFailedAndRender(t *testing.T) {
	if Failed(Decide(healthy())) {
		t.Fatal("healthy machine must not fail")
	}
	f := healthy()
	f.EngineVersion, f.CanProvision, f.EngineError = "", true, "Cannot connect to the Docker daemon"
	cs := Decide(f)
	if !Failed(cs) {
		t.Fatal("no engine must fail")
	}
	var b bytes.Buffer
	Render(&b, cs)
	if !strings.Contains(b.String(), "FAIL  docker engine") || !strings.Contains(b.String(), "fix: run `go tool mage cluster:up`") {
		t.Fatalf("render:\n%s", b.String())
	}
}

func TestDecideSaysWhatTermlabMayChangeAndHowToUndoIt(t *testing.T) {
	cases := []struct {
		name   string
		change func(*Facts)
		check  string
		detail string // "" when the check must be absent
	}{
		{"declined", func(f *Facts) { f.NoHostChanges = true }, "host changes", "TERMLAB_NO_HOST_CHANGES is set: termlab installs, edits and starts nothing"},
		{"allowed", func(f *Facts) { f.CanProvision = true }, "host changes", "(set TERMLAB_NO_HOST_CHANGES=1 to decline)"},
		{"not provisionable", func(*Facts) {}, "host changes", "TERMLAB_NO_HOST_CHANGES is not set; termlab cannot install an engine here anyway"},
		{"daemon.json untouched", func(*Facts) {}, "daemon.json", ""},
		{"daemon.json with a backup", func(f *Facts) {
			f.DaemonJSON = &dockerhost.DaemonJSONChange{Path: "/etc/docker/daemon.json", Backup: "/etc/docker/daemon.json.before-termlab",
				Keys: []string{`"default-runtime"`, `"runtimes"."termlab-runc"`}}
		}, "daemon.json", "to undo: `mv /etc/docker/daemon.json.before-termlab /etc/docker/daemon.json`, then restart dockerd"},
		{"daemon.json created by termlab", func(f *Facts) {
			f.MissingCaps = []string{"CAP_SYS_RESOURCE"}
			f.DaemonJSON = &dockerhost.DaemonJSONChange{Path: "/etc/docker/daemon.json", OnlyTermlab: true,
				Keys: []string{`"default-runtime"`, `"runtimes"."termlab-runc"`}}
		}, "daemon.json", "to undo: `rm /etc/docker/daemon.json` (it holds only termlab's keys), then restart dockerd (without termlab-runc, `docker run --privileged` fails here"},
		{"daemon.json with the user's keys and no backup", func(f *Facts) {
			f.DaemonJSON = &dockerhost.DaemonJSONChange{Path: "/etc/docker/daemon.json", Keys: []string{`"default-runtime"`, `"runtimes"."termlab-runc"`}}
		}, "daemon.json", `to undo: remove "default-runtime" and "runtimes"."termlab-runc" from /etc/docker/daemon.json`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := healthy()
			tc.change(&f)
			cs := Decide(f)
			c := statusOf(cs, tc.check)
			if tc.detail == "" {
				if c.Name != "" {
					t.Fatalf("unexpected check %+v", c)
				}
				return
			}
			if c.Status != Info || !strings.Contains(c.Detail, tc.detail) {
				t.Fatalf("%s: %s %q, want INFO with %q", tc.check, c.Status, c.Detail, tc.detail)
			}
			if Failed(cs) {
				t.Fatal("an INFO line failed the machine")
			}
		})
	}
}
