package mirror

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The thin magefile's mirror must declare what the targets declare, or
// `go tool mage -l` and `-h` would list other targets than those that run.
// TERMLAB_UPDATE_MIRROR=1 go test ./internal/targetsbin/mirror/ rewrites it.
func TestMirrorIsCurrent(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	if os.Getenv("TERMLAB_UPDATE_MIRROR") != "" {
		if err := Write(root); err != nil {
			t.Fatal(err)
		}
	}
	want, err := Generate(filepath.Join(root, "magefiles", "targets"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "magefiles", File))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("magefiles/%s differs from what magefiles/targets declares: run TERMLAB_UPDATE_MIRROR=1 go test ./internal/targetsbin/mirror/ and commit it", File)
	}
}

func TestMirrorDeclaresTargetsWithoutTheirBodies(t *testing.T) {
	dir := t.TempDir()
	src := `//go:build mage

// Targets of a test.
package main

import (
	"context"

	"github.com/magefile/mage/mg"

	"example.com/heavy"
)

func init() { heavy.Activate() }

var Default = Build

// Build builds.
func Build(ctx context.Context, out *string) error { return heavy.Build(ctx, out) }

// Ns is a namespace.
type Ns mg.Namespace

// Up brings it up.
func (Ns) Up() { heavy.Up() }

func helper() {}

type notNamespace struct{}
`
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{
		"// Targets of a test.\npackage main",
		"var Default = Build",
		"// Build builds.\nfunc Build(ctx context.Context, out *string) error { panic(handedOver) }",
		"// Ns is a namespace.\ntype Ns mg.Namespace",
		"// Up brings it up.\nfunc (Ns) Up() { panic(handedOver) }",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the mirror lacks %q:\n%s", want, s)
		}
	}
	for _, not := range []string{"heavy", "helper", "notNamespace", "func init"} {
		if strings.Contains(s, not) {
			t.Errorf("the mirror has %q:\n%s", not, s)
		}
	}
}
