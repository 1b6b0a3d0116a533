package ownbuild

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A binary whose sources did not change is kept without asking go; a changed
// source builds it again.
func TestBuildKeepsABinaryOfTheSameSources(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/tiny\n\ngo 1.22\n")
	write("main.go", "package main\n\nfunc main() { println(1) }\n")
	out := filepath.Join(t.TempDir(), "tiny")
	ctx := context.Background()
	if err := Build(ctx, dir, ".", out, Target{}); err != nil {
		t.Fatal(err)
	}
	// Without go on the PATH, only a kept binary builds.
	t.Setenv("PATH", t.TempDir())
	if err := Build(ctx, dir, ".", out, Target{}); err != nil {
		t.Fatalf("same sources: go was asked again: %v", err)
	}
	if err := Build(ctx, dir, ".", out, Target{GOARCH: "arm64"}); err == nil {
		t.Fatal("another target: the binary was kept")
	}
	write("main.go", "package main\n\nfunc main() { println(2) }\n")
	if err := Build(ctx, dir, ".", out, Target{}); err == nil {
		t.Fatal("changed source: the binary was kept")
	}
	if _, err := os.Stat(out + stampSuffix); err == nil {
		t.Fatal("a failed build left a stamp")
	}
}
