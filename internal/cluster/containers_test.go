package cluster

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
)

// namedNode is a kind node that has only a name: parsing needs no more.
type namedNode struct {
	nodes.Node
	name string
}

func (n *namedNode) String() string { return n.name }

func node(name string) nodes.Node { return &namedNode{name: name} }

func TestParseNodeContainersAndRoles(t *testing.T) {
	cp, w1, w2 := node("lab-control-plane"), node("lab-worker"), node("lab-worker2")
	ns := []nodes.Node{w2, cp, w1}
	cs, err := parseNodeContainers(ns, []string{
		"/lab-worker2|worker|running|termlab.local/node:v1|2026-12-05T13:06:01.123456789Z|" + workerMounts,
		"/lab-control-plane|control-plane|running|termlab.local/node:v1|0001-01-01T00:00:00Z|" + controlPlaneMounts,
		"/lab-worker|worker|exited|termlab.local/node:v1|2026-12-05T13:06:01.123456789Z|null",
	})
	if err != nil {
		t.Fatal(err)
	}
	if cs[2].node != w1 || cs[2].state != "exited" || cs[1].role != "control-plane" || cs[0].image != "termlab.local/node:v1" ||
		cs[0].started != time.Date(2026, 12, 5, 13, 6, 1, 123456789, time.UTC) || !cs[1].started.IsZero() ||
		cs[0].binds != nil || !slices.Equal(cs[1].binds, []string{"/check/work/main/manifests/kind/audit"}) || cs[2].binds != nil {
		t.Errorf("parsed %+v", cs)
	}
	gotCP, workers, err := splitRoles(cs)
	if err != nil {
		t.Fatal(err)
	}
	if gotCP != cp || len(workers) != 2 || workers[0] != w1 || workers[1] != w2 {
		t.Errorf("control plane %v, workers %v: want %v and sorted [%v %v]", gotCP, workers, cp, w1, w2)
	}
}

// The mounts of kind's nodes as `docker inspect --format '{{json .Mounts}}'`
// printed them here (a worker; the control plane of a cluster a CI clone
// made, with the audit policy mounted from it).
const (
	workerMounts       = `[{"Type":"bind","Source":"/lib/modules","Destination":"/lib/modules","Mode":"ro","RW":false,"Propagation":"rprivate"},{"Type":"volume","Name":"93108dba","Source":"/var/lib/docker/volumes/93108dba/_data","Destination":"/var","Driver":"local","Mode":"","RW":true,"Propagation":""}]`
	controlPlaneMounts = `[{"Type":"bind","Source":"/lib/modules","Destination":"/lib/modules","Mode":"ro","RW":false,"Propagation":"rprivate"},{"Type":"bind","Source":"/check/work/main/manifests/kind/audit","Destination":"/etc/termlab/audit","Mode":"ro","RW":false,"Propagation":"rprivate"}]`
)

// A node whose bind mount's source is gone is found; one whose sources all
// exist is not.
func TestGoneBind(t *testing.T) {
	ns := []nodes.Node{node("lab-control-plane"), node("lab-worker")}
	cs, err := parseNodeContainers(ns, []string{
		"/lab-control-plane|control-plane|running|img|2026-12-05T13:06:01Z|" + controlPlaneMounts,
		"/lab-worker|worker|running|img|2026-12-05T13:06:01Z|" + workerMounts,
	})
	if err != nil {
		t.Fatal(err)
	}
	// kind's own /lib/modules is not looked at (Docker Desktop's VM has it).
	why := map[string]string{}
	gone := func(p string) string { return why[p] }
	if n, b, w := goneBind(cs, gone); n != nil {
		t.Errorf("every source there: got %v %q %q", n, b, w)
	}
	why["/check/work/main/manifests/kind/audit"] = "which no longer exists"
	if n, b, w := goneBind(cs, gone); n != ns[0] || b != "/check/work/main/manifests/kind/audit" || w != "which no longer exists" {
		t.Errorf("the audit policy's directory removed: got %v %q %q", n, b, w)
	}
}

func TestSourceGone(t *testing.T) {
	dir := t.TempDir()
	if w := sourceGone(filepath.Join(dir, "audit")); !strings.Contains(w, "no longer exists") {
		t.Errorf("a missing source: got %q", w)
	}
	if err := os.Mkdir(filepath.Join(dir, "audit"), 0o755); err != nil {
		t.Fatal(err)
	}
	if w := sourceGone(filepath.Join(dir, "audit")); !strings.Contains(w, "empty directory") {
		t.Errorf("an empty directory, as docker makes one: got %q", w)
	}
	if err := os.WriteFile(filepath.Join(dir, "audit", "policy.yaml"), []byte("rules: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if w := sourceGone(filepath.Join(dir, "audit")); w != "" {
		t.Errorf("a directory holding the policy: got %q", w)
	}
	if w := sourceGone(filepath.Join(dir, "audit", "policy.yaml")); w != "" {
		t.Errorf("a file: got %q", w)
	}
}

func TestParseNodeContainersRefusesWhatDoesNotAddUp(t *testing.T) {
	const at = "|2026-12-05T13:06:01Z|[]"
	ns := []nodes.Node{node("a"), node("b")}
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{[]string{"/a|worker|running|img" + at}, "1 of 2"},
		{[]string{"/a|worker|running|img" + at, "/c|worker|running|img" + at}, "not a node of the cluster"},
		{[]string{"/a|worker|running|img", "/b|worker|running|img" + at}, "want name|role|state|image|started|mounts"},
		{[]string{"/a|worker|running|img|yesterday|[]", "/b|worker|running|img" + at}, "start time"},
		{[]string{"/a|worker|running|img|2026-12-05T13:06:01Z|{", "/b|worker|running|img" + at}, "mounts"},
	} {
		if _, err := parseNodeContainers(ns, tc.lines); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error with %q", tc.lines, err, tc.want)
		}
	}
	cs, _ := parseNodeContainers(ns, []string{"/a|worker|running|img" + at, "/b|worker|running|img" + at})
	if _, _, err := splitRoles(cs); err == nil {
		t.Error("no control plane: want an error")
	}
}

// Images by tag, as `crictl images -o json` printed them on a node here.
func TestParseCrictlImages(t *testing.T) {
	got, err := parseCrictlImages([]byte(`{"images": [
		{"id": "sha256:3588e2a5", "repoTags": ["termlab.local/heartbeat:v1"], "repoDigests": ["docker.io/library/import-2026-12-05@sha256:f9ef028e"], "size": "6812052"},
		{"id": "sha256:aaaa", "repoTags": ["termlab.local/kwok:v0.8.0", "registry.k8s.io/kwok/kwok:v0.8.0"]},
		{"id": "sha256:bbbb", "repoTags": []}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"termlab.local/heartbeat:v1": "sha256:3588e2a5", "termlab.local/kwok:v0.8.0": "sha256:aaaa", "registry.k8s.io/kwok/kwok:v0.8.0": "sha256:aaaa"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
	if _, err := parseCrictlImages([]byte("time=... level=error msg=...")); err == nil {
		t.Error("crictl's error text: want an error")
	}
}
