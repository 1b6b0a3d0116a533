package workshop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/progress"
)

// fakeDocker records what it was asked to load.
type fakeDocker struct {
	platform string
	loaded   [][]byte
	ids      map[string]string // what ImageID answers
}

func (d *fakeDocker) Platform(context.Context) (string, error) { return d.platform, nil }

func (d *fakeDocker) Load(_ context.Context, r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	d.loaded = append(d.loaded, b)
	return nil
}

func (d *fakeDocker) ImageID(_ context.Context, ref string) (string, error) {
	if id, ok := d.ids[ref]; ok {
		return id, nil
	}
	return "", fmt.Errorf("no such image %s", ref)
}

const testNodeID = "sha256:" + "1111111111111111111111111111111111111111111111111111111111111111"

// testBundle writes a small bundle: a binary, two inputs, one "image" of
// incompressible bytes large enough to span many gzip blocks.
func testBundle(t *testing.T) (archive string, m *Manifest) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	image := make([]byte, 3<<20)
	for i := range image { // deterministic, poorly compressible
		image[i] = byte((i*7919 + i/13) ^ (i >> 5))
	}
	files := map[string][]byte{
		BinaryFile:                    []byte("#!/bin/sh\necho termlab\n"),
		"manifests/kind/cluster.yaml": []byte("kind: Cluster\n"),
		"labs/force/README.md":        []byte("# lab:force\n"),
		ImagesDir + "/node.tar":       image,
	}
	m = &Manifest{Format: Format, CreatedAt: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC), Platform: "linux/amd64",
		Versions: map[string]string{"kubernetes": "v1.37.2"},
		Images:   []Image{{Role: "node", Ref: "termlab.local/node:v1.37.2", ID: testNodeID, From: "built", File: ImagesDir + "/node.tar"}}}
	for _, p := range []string{BinaryFile, "manifests/kind/cluster.yaml", "labs/force/README.md", ImagesDir + "/node.tar"} {
		mode := os.FileMode(0o644)
		if p == BinaryFile {
			mode = 0o755
		}
		if err := writeFile(src, p, files[p], mode); err != nil {
			t.Fatal(err)
		}
		f, err := hashFile(src, p)
		if err != nil {
			t.Fatal(err)
		}
		m.Files = append(m.Files, f)
	}
	raw, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	archive = filepath.Join(dir, "bundle.tar.gz")
	if _, err := writeArchive(context.Background(), quiet(), archive, m, raw, src); err != nil {
		t.Fatal(err)
	}
	return archive, m
}

func quiet() *progress.Logger { return progress.New(io.Discard) }

func okDocker() *fakeDocker {
	return &fakeDocker{platform: "linux/amd64", ids: map[string]string{"termlab.local/node:v1.37.2": testNodeID}}
}

func TestLoadRoundTrip(t *testing.T) {
	archive, m := testBundle(t)
	if _, err := Verify(context.Background(), quiet(), archive); err != nil {
		t.Fatalf("Verify of an intact bundle: %v", err)
	}
	dest := filepath.Join(t.TempDir(), TopDir)
	// A participant's earlier results stay.
	if err := writeFile(dest, "results/force/x/summary.json", []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := okDocker()
	res, err := Load(context.Background(), archive, LoadOptions{Dest: dest, Log: quiet(), Docker: d})
	if err != nil {
		t.Fatal(err)
	}
	if res.Manifest.Platform != "linux/amd64" || len(d.loaded) != 1 {
		t.Fatalf("loaded %d images, want 1", len(d.loaded))
	}
	if sum := sha256.Sum256(d.loaded[0]); hex.EncodeToString(sum[:]) != m.Files[3].SHA256 {
		t.Error("docker load got other bytes than the image archive")
	}
	for _, p := range []string{BinaryFile, "manifests/kind/cluster.yaml", "labs/force/README.md", ManifestFile, "results/force/x/summary.json"} {
		if _, err := os.Stat(filepath.Join(dest, p)); err != nil {
			t.Errorf("after Load: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(dest, ImagesDir, "node.tar")); err == nil {
		t.Error("the image archive was unpacked; it should only be loaded")
	}
	if st, err := os.Stat(filepath.Join(dest, BinaryFile)); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("binary mode: %v %v", st.Mode(), err)
	}
	if !IsBundleRoot(dest) {
		t.Error("the unpacked folder is not recognised as a bundle")
	}
	if _, err := os.Stat(dest + ".loading"); err == nil {
		t.Error("the staging folder is left behind")
	}
}

// Every way a bundle can be damaged: a clear error, nothing loaded, nothing unpacked.
func TestLoadDamaged(t *testing.T) {
	archive, _ := testBundle(t)
	good, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		damage func([]byte) []byte
		want   string
	}{
		{"truncated in the middle", func(b []byte) []byte { return b[:len(b)/2] }, "truncated"},
		{"truncated at the very end", func(b []byte) []byte { return b[:len(b)-4] }, "truncated"},
		{"cut after the header", func(b []byte) []byte { return b[:30] }, "truncated"},
		{"empty", func(b []byte) []byte { return nil }, "damaged"},
		{"a flipped byte", func(b []byte) []byte {
			c := bytes.Clone(b)
			c[len(c)*2/3] ^= 0x40
			return c
		}, "damaged"},
		{"junk appended", func(b []byte) []byte { return append(bytes.Clone(b), []byte("not gzip at all")...) }, "damaged"},
		{"not a bundle", func([]byte) []byte { return []byte("hello") }, "damaged"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "bad.tar.gz")
			if err := os.WriteFile(bad, tc.damage(good), 0o644); err != nil {
				t.Fatal(err)
			}
			dest := filepath.Join(t.TempDir(), TopDir)
			d := okDocker()
			_, err := Load(context.Background(), bad, LoadOptions{Dest: dest, Log: quiet(), Docker: d})
			t.Log(err)
			var de *DamagedError
			if !errors.As(err, &de) {
				t.Fatalf("want a DamagedError, got %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was loaded or unpacked") {
				t.Errorf("error %q: want %q and that nothing changed", err, tc.want)
			}
			if len(d.loaded) != 0 {
				t.Error("docker load was called for a damaged bundle")
			}
			if _, err := os.Stat(dest); err == nil {
				t.Error("the folder was created for a damaged bundle")
			}
			if _, err := os.Stat(dest + ".loading"); err == nil {
				t.Error("a staging folder was left behind")
			}
		})
	}
}

// A bundle whose manifest does not describe its files is refused.
func TestVerifyManifestMismatch(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := writeFile(src, BinaryFile, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(src, "labs/x/README.md", []byte("readme"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin, _ := hashFile(src, BinaryFile)
	readme, _ := hashFile(src, "labs/x/README.md")
	for _, tc := range []struct {
		name  string
		files []File
		want  string
	}{
		{"wrong digest", []File{bin, {Path: readme.Path, Size: readme.Size, Mode: 0o644, SHA256: strings.Repeat("0", 64)}}, "labs/x/README.md: sha256"},
		{"file missing from the archive", []File{bin, readme, {Path: "labs/y/README.md", Size: 0, Mode: 0o644, SHA256: strings.Repeat("0", 64)}}, "incomplete: 1 files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Manifest{Format: Format, Platform: "linux/amd64", Files: tc.files}
			raw, _ := m.Marshal()
			archive := filepath.Join(t.TempDir(), "b.tar.gz")
			// writeArchive refuses files whose digest changed; write the archive by hand.
			if err := writeUnchecked(archive, raw, src, []File{bin, readme}); err != nil {
				t.Fatal(err)
			}
			_, err := Verify(context.Background(), quiet(), archive)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Verify: %v, want %q", err, tc.want)
			}
		})
	}
	// An entry the manifest does not list.
	m := &Manifest{Format: Format, Platform: "linux/amd64", Files: []File{bin}}
	raw, _ := m.Marshal()
	archive := filepath.Join(t.TempDir(), "extra.tar.gz")
	if err := writeUnchecked(archive, raw, src, []File{bin, readme}); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(context.Background(), quiet(), archive); err == nil || !strings.Contains(err.Error(), "not in manifest.json") {
		t.Fatalf("Verify with an unlisted entry: %v", err)
	}
}

func TestLoadRefusesBeforeChanging(t *testing.T) {
	archive, _ := testBundle(t)
	t.Run("other platform", func(t *testing.T) {
		d := okDocker()
		d.platform = "linux/arm64"
		dest := filepath.Join(t.TempDir(), TopDir)
		_, err := Load(context.Background(), archive, LoadOptions{Dest: dest, Log: quiet(), Docker: d})
		if err == nil || !strings.Contains(err.Error(), "the bundle is for linux/amd64, this Docker engine is linux/arm64") {
			t.Fatalf("err = %v", err)
		}
		if len(d.loaded) != 0 {
			t.Error("loaded images for the wrong platform")
		}
		if _, err := os.Stat(dest); err == nil {
			t.Error("unpacked for the wrong platform")
		}
	})
	t.Run("into the repository", func(t *testing.T) {
		dest := t.TempDir()
		if err := os.WriteFile(filepath.Join(dest, "go.mod"), []byte("module github.com/termlab/termlab\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		d := okDocker()
		_, err := Load(context.Background(), archive, LoadOptions{Dest: dest, Log: quiet(), Docker: d})
		if err == nil || !strings.Contains(err.Error(), "is a termlab repository") || len(d.loaded) != 0 {
			t.Fatalf("err = %v, loaded %d", err, len(d.loaded))
		}
	})
	t.Run("the engine reports another image ID", func(t *testing.T) {
		d := okDocker()
		d.ids["termlab.local/node:v1.37.2"] = "sha256:" + strings.Repeat("2", 64)
		dest := filepath.Join(t.TempDir(), TopDir)
		_, err := Load(context.Background(), archive, LoadOptions{Dest: dest, Log: quiet(), Docker: d})
		if err == nil || !strings.Contains(err.Error(), "the bundle recorded "+testNodeID) {
			t.Fatalf("err = %v", err)
		}
		if _, err := os.Stat(filepath.Join(dest, BinaryFile)); err == nil {
			t.Error("files were unpacked although the image check failed")
		}
	})
}

func TestParseManifestRefusesBadPaths(t *testing.T) {
	for _, p := range []string{"../etc/passwd", "/etc/passwd", "a/../../b", "manifest.json", ""} {
		m := Manifest{Format: Format, Files: []File{{Path: BinaryFile, SHA256: strings.Repeat("a", 64)}, {Path: p, SHA256: strings.Repeat("a", 64)}}}
		raw, _ := m.Marshal()
		if _, err := ParseManifest(raw); err == nil {
			t.Errorf("ParseManifest accepted path %q", p)
		}
	}
}

func TestTagOf(t *testing.T) {
	for ref, want := range map[string]string{
		"termlab.local/node:v1.37.2":         "v1.37.2",
		"kindest/node:v1.37.0@sha256:abcdef": "v1.37.0",
		"localhost:5000/node":                "",
		"registry.k8s.io/kwok/kwok:v0.8.0":   "v0.8.0",
	} {
		if got := tagOf(ref); got != want {
			t.Errorf("tagOf(%q) = %q, want %q", ref, got, want)
		}
	}
}

// With pigz on PATH the archive is written through it; a stand-in that runs
// gzip proves the plumbing (the stream is the same format either way).
func TestWriteArchiveWithPigz(t *testing.T) {
	gz, err := exec.LookPath("gzip")
	if err != nil {
		t.Skip("no gzip to stand in for pigz")
	}
	bin := t.TempDir()
	script := "#!/bin/sh\nexec " + gz + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "pigz"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	archive, _ := testBundle(t)
	if _, err := Verify(context.Background(), quiet(), archive); err != nil {
		t.Fatalf("an archive written through pigz does not verify: %v", err)
	}
}
