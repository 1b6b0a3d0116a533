// Package version says which termlab is running: `termlab version` prints it
// and every run's summary.json carries it, so a result can be traced to the
// binary that made it.
//
// A release build (go tool mage release, internal/release) stamps Version,
// Commit and Date with -ldflags -X, because it builds with -buildvcs=false
// for reproducible binaries and Go then records no VCS facts. Any other build
// falls back to what Go recorded (runtime/debug.ReadBuildInfo) and says
// "devel" or "unknown" rather than guess.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set by the release build with -ldflags "-X <Package>.version=…"; empty otherwise.
var (
	version string
	commit  string
	date    string
)

// Package is this package's import path, for the release build's -X flags.
const Package = "github.com/termlab/termlab/internal/version"

// The variables the release build stamps (see Package).
const (
	VersionVar = "version"
	CommitVar  = "commit"
	DateVar    = "date"
)

// ClientGoModule is the Kubernetes client library whose version Info names.
const ClientGoModule = "k8s.io/client-go"

// Unknown is said of a fact the binary does not carry.
const Unknown = "unknown"

// Devel is the version of a build that no release stamped.
const Devel = "devel"

// Info is which termlab this is. Its JSON is summary.json's "termlab" object.
type Info struct {
	Version string `json:"version"`
	// Commit is the git commit built, with "-dirty" when the checkout had
	// uncommitted changes.
	Commit string `json:"commit"`
	Go     string `json:"go"`
	// ClientGo is the k8s.io/client-go module the binary was built with:
	// which Kubernetes API client talked to the cluster.
	ClientGo string `json:"clientGo"`
	// Date is when the commit was made (a release build's date is its
	// commit's, so that building again gives the same binary).
	Date string `json:"date,omitempty"`
}

// Get returns this binary's Info.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuild(stamps{version: version, commit: commit, date: date}, bi, runtime.Version())
}

// stamps are the -X values of a release build.
type stamps struct{ version, commit, date string }

// fromBuild decides Info from the release stamps, else Go's build info (bi
// may be nil: a binary built without module support).
func fromBuild(s stamps, bi *debug.BuildInfo, goVersion string) Info {
	info := Info{Version: s.version, Commit: s.commit, Date: s.date, Go: goVersion}
	if bi == nil {
		bi = &debug.BuildInfo{}
	}
	if bi.GoVersion != "" {
		info.Go = bi.GoVersion
	}
	if info.Version == "" {
		info.Version = bi.Main.Version
		// go build in a checkout without VCS facts says "(devel)"; go
		// install module@version says the version.
		if info.Version == "" || info.Version == "(devel)" {
			info.Version = Devel
		}
	}
	info.ClientGo = Unknown
	for _, m := range bi.Deps {
		if m.Path == ClientGoModule {
			info.ClientGo = m.Version
			if m.Replace != nil && m.Replace.Version != "" {
				info.ClientGo = m.Replace.Version
			}
		}
	}
	var revision, vcsTime string
	var modified bool
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			revision = kv.Value
		case "vcs.time":
			vcsTime = kv.Value
		case "vcs.modified":
			modified = kv.Value == "true"
		}
	}
	if info.Commit == "" {
		info.Commit = Unknown
		if revision != "" {
			info.Commit = DirtyCommit(revision, modified)
		}
	}
	if info.Date == "" {
		info.Date = vcsTime
		if info.Date == "" {
			info.Date = Unknown
		}
	}
	return info
}

// DirtyCommit is how a commit is named when the checkout built had changes
// (git describe's "-dirty"): such a binary is not that commit's.
func DirtyCommit(revision string, modified bool) string {
	if modified {
		return revision + "-dirty"
	}
	return revision
}

// String is what `termlab version` prints.
func (i Info) String() string {
	return fmt.Sprintf("termlab %s\ncommit:    %s\nbuilt:     %s (commit date)\ngo:        %s %s/%s\nclient-go: %s\n",
		i.Version, i.Commit, i.Date, i.Go, runtime.GOOS, runtime.GOARCH, i.ClientGo)
}
