package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// plugins/termlab.yaml is krew's manifest of this binary: it names the
// plugin kubectl runs (PluginName) on each platform it is released for.
func TestKrewManifest(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "plugins", "termlab.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			ShortDescription string `json:"shortDescription"`
			Description      string `json:"description"`
			Platforms        []struct {
				Selector struct {
					MatchLabels map[string]string `json:"matchLabels"`
				} `json:"selector"`
				URI    string `json:"uri"`
				SHA256 string `json:"sha256"`
				Bin    string `json:"bin"`
			} `json:"platforms"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" || m.Metadata.Name != "termlab" ||
		m.Spec.ShortDescription == "" || m.Spec.Description == "" {
		t.Errorf("manifest header %+v", m)
	}
	want := map[string]bool{"linux/amd64": true, "linux/arm64": true, "darwin/amd64": true, "darwin/arm64": true, "windows/amd64": true, "windows/arm64": true}
	for _, p := range m.Spec.Platforms {
		key := p.Selector.MatchLabels["os"] + "/" + p.Selector.MatchLabels["arch"]
		if !want[key] {
			t.Errorf("platform %s: unexpected or twice", key)
		}
		delete(want, key)
		bin := PluginName
		if p.Selector.MatchLabels["os"] == "windows" {
			bin += ".exe" // krew links kubectl-termlab.exe to it there
		}
		if p.Bin != bin || p.URI == "" || p.SHA256 == "" {
			t.Errorf("platform %s: bin %q (want %s), uri %q, sha256 %q", key, p.Bin, bin, p.URI, p.SHA256)
		}
	}
	for key := range want {
		t.Errorf("no platform %s", key)
	}
}

// On Windows the commands that need a local Docker engine are refused with
// what to do instead; diagnose and version, and everything on Linux and
// macOS, are not.
func TestRunsOn(t *testing.T) {
	for _, c := range []struct {
		goos, command string
		refused       bool
	}{
		{"windows", "lab:finalizer", true},
		{"windows", "cluster:up", true},
		{"windows", "diagnose", false},
		{"windows", "version", false},
		{"windows", "results:index", false},
		{"windows", "workshop", true},
		{"windows", "workshop:load", true},
		{"windows", "workshop:verify", false},
		{"linux", "lab:finalizer", false},
		{"darwin", "cluster:up", false},
	} {
		err := runsOn(c.goos, c.command)
		if (err != nil) != c.refused {
			t.Errorf("runsOn(%s, %s) = %v, want refused %v", c.goos, c.command, err, c.refused)
		}
		if err != nil && !strings.Contains(err.Error(), c.command) || err != nil && !strings.Contains(err.Error(), "diagnose, version and workshop:verify work everywhere") {
			t.Errorf("runsOn(%s, %s): %v; want the command named and what still works", c.goos, c.command, err)
		}
	}
}
