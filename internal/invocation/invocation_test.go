package invocation

import "testing"

func TestCommandPerSpelling(t *testing.T) {
	binaryHas := map[string]bool{"cluster:up": true, "lab:scale": true, "diagnose": true}
	for _, tc := range []struct {
		name   string
		inv    Invocation
		target string
		flags  []string
		want   string
	}{
		{"mage", Invocation{Kind: Mage}, "cluster:up", nil, "go tool mage cluster:up"},
		{"mage keeps mage flags", Invocation{Kind: Mage}, "lab:scale", []string{"-limits=raised", "-nodeaccess"}, "go tool mage lab:scale -limits=raised -nodeaccess"},
		{"binary", Invocation{Kind: Binary, Commands: binaryHas}, "cluster:up", nil, "termlab cluster:up"},
		{"binary dashes flags", Invocation{Kind: Binary, Commands: binaryHas}, "lab:scale", []string{"-limits=raised", "-nodeaccess"}, "termlab lab:scale --limits=raised --node-access"},
		{"plugin", Invocation{Kind: Plugin, Commands: binaryHas}, "diagnose", []string{"-allnodes"}, "kubectl termlab diagnose --all-nodes"},
		{"workshop", Invocation{Kind: Workshop, Commands: binaryHas}, "cluster:up", nil, "./termlab cluster:up"},
		{"binary without the target: the checkout's command", Invocation{Kind: Binary, Commands: binaryHas}, "images:all", nil, "go tool mage images:all (in a termlab checkout)"},
		{"workshop without the target keeps mage flags", Invocation{Kind: Workshop, Commands: binaryHas}, "matrix", []string{"-k8s=v1.36"}, "go tool mage matrix -k8s=v1.36 (in a termlab checkout)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.inv.Command(tc.target, tc.flags...); got != tc.want {
				t.Errorf("Command(%q, %q) = %q, want %q", tc.target, tc.flags, got, tc.want)
			}
		})
	}
}

func TestFlag(t *testing.T) {
	for _, tc := range []struct {
		kind       Kind
		flag, want string
	}{
		{Mage, "-nodeaccess", "-nodeaccess"},
		{Binary, "-nodeaccess", "--node-access"},
		{Binary, "-nodeaccess=false", "--node-access=false"},
		{Plugin, "-controlplaneaccess", "--control-plane-access"},
		{Workshop, "-unattended", "--unattended"},
		{Binary, "--by=script", "--by=script"},
	} {
		if got := (Invocation{Kind: tc.kind}).Flag(tc.flag); got != tc.want {
			t.Errorf("kind %d: Flag(%q) = %q, want %q", tc.kind, tc.flag, got, tc.want)
		}
	}
}

func TestSetChangesThePackageSpelling(t *testing.T) {
	t.Cleanup(func() { Set(Invocation{Kind: Mage}) })
	if got := Command("cluster:up"); got != "go tool mage cluster:up" {
		t.Fatalf("default: %q, want the mage spelling", got)
	}
	Set(Invocation{Kind: Plugin, Commands: map[string]bool{"cluster:up": true}})
	if got := Command("cluster:up"); got != "kubectl termlab cluster:up" {
		t.Errorf("after Set(Plugin): %q", got)
	}
	if got := Flag("-nodeaccess"); got != "--node-access" {
		t.Errorf("after Set(Plugin): Flag = %q", got)
	}
}
