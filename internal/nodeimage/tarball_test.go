package nodeimage

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteTarMakesParentsAndIsReproducible(t *testing.T) {
	src := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(src, []byte("ELF"), 0o600); err != nil {
		t.Fatal(err)
	}
	entries := []Entry{
		{Path: "/usr/local/bin/pause", Mode: 0o755, Source: src},
		{Path: "/etc/x.conf", Mode: 0o644, Content: []byte("a=1\n")},
		{Path: "/usr/sbin/iptables", Link: "xtables-nft-multi"},
	}
	var a, b bytes.Buffer
	if err := WriteTar(&a, entries); err != nil {
		t.Fatal(err)
	}
	if err := WriteTar(&b, entries); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("same entries gave different tarballs")
	}
	got := map[string]*tar.Header{}
	tr := tar.NewReader(&a)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got[h.Name] = h
	}
	for _, want := range []string{"usr/", "usr/local/", "usr/local/bin/", "etc/", "usr/sbin/", "usr/local/bin/pause", "etc/x.conf", "usr/sbin/iptables"} {
		if got[want] == nil {
			t.Errorf("missing %s in %v", want, got)
		}
	}
	if h := got["usr/local/bin/pause"]; h == nil || h.Mode != 0o755 || h.Size != 3 || h.Uid != 0 {
		t.Errorf("pause header %+v", h)
	}
	if h := got["usr/sbin/iptables"]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "xtables-nft-multi" {
		t.Errorf("symlink header %+v", h)
	}
}
