package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func TestRenderConflistGolden(t *testing.T) {
	tests := []struct {
		golden   string
		podCIDRs []string
		mtu      int
	}{
		{"ipv4.conflist.golden", []string{"10.244.1.0/24"}, 1500},
		{"dualstack.conflist.golden", []string{"10.244.2.0/24", "fd00:10:244:2::/64"}, 1450},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			got, err := renderConflist(tc.podCIDRs, tc.mtu)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(got) {
				t.Fatalf("invalid JSON:\n%s", got)
			}
			path := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("conflist differs from %s (go test -update rewrites it):\ngot:\n%s\nwant:\n%s", path, got, want)
			}
		})
	}
}

func TestRenderConflistErrors(t *testing.T) {
	tests := []struct {
		name     string
		podCIDRs []string
		mtu      int
	}{
		{"no podCIDR", nil, 1500},
		{"not a CIDR", []string{"10.244.1.0"}, 1500},
		{"two IPv4", []string{"10.244.1.0/24", "10.245.1.0/24"}, 1500},
		{"tiny MTU", []string{"10.244.1.0/24"}, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if b, err := renderConflist(tc.podCIDRs, tc.mtu); err == nil {
				t.Errorf("want an error, got:\n%s", b)
			}
		})
	}
}

func TestRenderConflistMasksHostBits(t *testing.T) {
	a, err := renderConflist([]string{"10.244.1.7/24"}, 1500)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := renderConflist([]string{"10.244.1.0/24"}, 1500)
	if !bytes.Equal(a, b) {
		t.Errorf("host bits not masked:\n%s", a)
	}
}

func TestWriteFileIfChanged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "net.d") // created on demand
	path := filepath.Join(dir, confName)
	steps := []struct {
		data        string
		wantChanged bool
	}{
		{"one\n", true},
		{"one\n", false},
		{"two\n", true},
		{"two\n", false},
	}
	for i, s := range steps {
		changed, err := writeFileIfChanged(path, []byte(s.data))
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if changed != s.wantChanged {
			t.Errorf("step %d: changed = %v, want %v", i, changed, s.wantChanged)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != s.data {
			t.Fatalf("step %d: file = %q, %v; want %q", i, got, err, s.data)
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, %v; want 0644", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %v, want only %s (no temporary files left)", entries, confName)
	}
}
