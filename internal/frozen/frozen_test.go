package frozen

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The cgroup a killed runc left frozen deep under a kind node (as found on
// this machine: a pod's container scope under the node's kubelet.slice) is
// thawed, on cgroup v1 and v2; thawed ones and other containers' are left
// alone; a host without the hierarchy is not an error.
func TestThawFindsTheFrozenCgroupUnderTheNode(t *testing.T) {
	root := t.TempDir()
	id, other := "a78b1ca9", "0ther"
	v1 := Roots(root, id)[0]
	stuck := filepath.Join(v1, "kubelet.slice", "kubelet-kubepods.slice", "cri-containerd-e4f9.scope")
	write(t, filepath.Join(v1, "freezer.state"), "THAWED\n")
	write(t, filepath.Join(stuck, "freezer.state"), "FROZEN\n")
	write(t, filepath.Join(v1, "kubelet.slice", "freezer.state"), "THAWED\n")
	v2 := Roots(root, id)[3]
	stuck2 := filepath.Join(v2, "kubelet.slice", "cri-containerd-77.scope")
	write(t, filepath.Join(stuck2, "cgroup.freeze"), "1\n")
	write(t, filepath.Join(v2, "cgroup.freeze"), "0\n")
	otherFrozen := filepath.Join(Roots(root, other)[0], "freezer.state")
	write(t, otherFrozen, "FROZEN\n")

	thawed, err := Thaw(Roots(root, id)...)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(thawed)
	want := []string{stuck, stuck2}
	slices.Sort(want)
	if !slices.Equal(thawed, want) {
		t.Fatalf("thawed %v, want %v", thawed, want)
	}
	if got := read(t, filepath.Join(stuck, "freezer.state")); got != "THAWED" {
		t.Errorf("v1 freezer.state is %q, want THAWED", got)
	}
	if got := read(t, filepath.Join(stuck2, "cgroup.freeze")); got != "0" {
		t.Errorf("v2 cgroup.freeze is %q, want 0", got)
	}
	if got := read(t, otherFrozen); got != "FROZEN\n" {
		t.Errorf("another container's cgroup was touched: %q", got)
	}
	if thawed, err := Thaw(Roots(filepath.Join(root, "none"), id)...); err != nil || len(thawed) != 0 {
		t.Errorf("a host without the hierarchy: thawed %v, %v; want nothing, no error", thawed, err)
	}
}
