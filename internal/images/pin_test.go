package images

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/progress"
)

const (
	digestA = "sha256:aaaa"
	digestB = "sha256:bbbb"
	digestC = "sha256:cccc"
)

func TestDecidePin(t *testing.T) {
	for _, tc := range []struct {
		name  string
		facts pinFacts
		want  pinDecision
	}{
		{"first use trusts and records the image's digest", pinFacts{Present: []string{digestA}}, pinDecision{pinTrust, digestA}},
		{"first use of an image pushed under two manifests pins the first", pinFacts{Present: []string{digestA, digestB}}, pinDecision{pinTrust, digestA}},
		{"the pinned image holds", pinFacts{Pinned: digestA, Present: []string{digestA}}, pinDecision{pinHolds, digestA}},
		{"the pinned digest among several holds", pinFacts{Pinned: digestB, Present: []string{digestA, digestB}}, pinDecision{pinHolds, digestB}},
		// Contradicting cases: what must not pass as the pinned image.
		{"a different digest is refused", pinFacts{Pinned: digestA, Present: []string{digestB}}, pinDecision{Verdict: pinRefuse}},
		{"different digests, none the pinned one, are refused", pinFacts{Pinned: digestA, Present: []string{digestB, digestC}}, pinDecision{Verdict: pinRefuse}},
		{"no repository digest and no pin: not pinned", pinFacts{}, pinDecision{Verdict: pinNoDigest}},
		{"no repository digest records nothing, even pinned", pinFacts{Pinned: digestA}, pinDecision{Verdict: pinUncheckable}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decidePin(tc.facts); got != tc.want {
				t.Fatalf("decidePin(%+v) = %+v, want %+v", tc.facts, got, tc.want)
			}
		})
	}
}

func TestDigestsIn(t *testing.T) {
	for _, tc := range []struct {
		ref         string
		repoDigests []string
		wantRepo    string
		want        []string
	}{
		{OfficialKwok, []string{"registry.k8s.io/kwok/kwok@" + digestB, "mirror.example/kwok/kwok@" + digestC, "registry.k8s.io/kwok/kwok@" + digestA},
			"registry.k8s.io/kwok/kwok", []string{digestA, digestB}},
		{OfficialNodeFor("v1.36.3"), []string{"kindest/node@" + digestA}, "kindest/node", []string{digestA}},
		{"docker.io/kindest/node:v1.36.3", []string{"kindest/node@" + digestA}, "docker.io/kindest/node", []string{digestA}},
		{"docker.io/library/busybox:1.37", []string{"busybox@" + digestA}, "docker.io/library/busybox", []string{digestA}},
		{"127.0.0.1:5000/tiny:v1", []string{"127.0.0.1:5000/tiny@" + digestA, "tiny@" + digestB}, "127.0.0.1:5000/tiny", []string{digestA}},
		{"localhost/tiny:v1", []string{"tiny@" + digestB}, "localhost/tiny", nil},
		{"registry.k8s.io/kwok/kwok:v0.8.0", nil, "registry.k8s.io/kwok/kwok", nil},
	} {
		repo, digest := splitRef(tc.ref)
		if repo != tc.wantRepo || digest != "" {
			t.Errorf("splitRef(%q) = %q, %q; want %q, \"\"", tc.ref, repo, digest, tc.wantRepo)
		}
		if got := digestsIn(repo, tc.repoDigests); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("digestsIn(%q, %q) = %q, want %q", repo, tc.repoDigests, got, tc.want)
		}
	}
	if repo, digest := splitRef("kindest/node:v1.33.1@" + digestA); repo != "kindest/node" || digest != digestA {
		t.Errorf("splitRef of a reference by digest = %q, %q", repo, digest)
	}
}

// TestCheckPin walks one image through its pin file: first use, reuse, the
// tag moved, the line deleted, and images without a repository digest.
func TestCheckPin(t *testing.T) {
	ctx := context.Background()
	pins := pinFile{filepath.Join(t.TempDir(), "cache", PinFile)}
	var out bytes.Buffer
	log := progress.New(&out)
	check := func(ref string, repoDigests ...string) (string, error) {
		t.Helper()
		out.Reset()
		return checkPin(ctx, log, pins, ref, repoDigests)
	}
	const ref = OfficialKwok
	const repo = "registry.k8s.io/kwok/kwok"

	got, err := check(ref, repo+"@"+digestA)
	if err != nil || got != digestA {
		t.Fatalf("first use: %q, %v", got, err)
	}
	if !strings.Contains(out.String(), "trusted at its first use as "+digestA) || !strings.Contains(out.String(), pins.path) {
		t.Errorf("first use says %q", out.String())
	}
	if got, err := check(ref, repo+"@"+digestA); err != nil || got != digestA || out.Len() != 0 {
		t.Fatalf("second use: %q, %v, said %q", got, err, out.String())
	}

	_, err = check(ref, repo+"@"+digestB)
	if err == nil {
		t.Fatal("a moved tag was not refused")
	}
	for _, want := range []string{ref, digestA, digestB, pins.path, "docker pull " + repo + "@" + digestA, "docker tag " + repo + "@" + digestA + " " + ref, `delete the line "` + ref + " " + digestA + `"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal lacks %q: %v", want, err)
		}
	}
	if _, err := check(ref, repo+"@"+digestB); err == nil {
		t.Fatal("the refusal did not hold on the next use")
	}

	// An image with no repository digest is used as it is and pins nothing.
	if got, err := check(ref); err != nil || got != "" || !strings.Contains(out.String(), "its pin "+digestA+" is not checked") {
		t.Fatalf("pinned, no repository digest: %q, %v, said %q", got, err, out.String())
	}
	const loaded = "kindest/node:v1.36.3"
	if got, err := check(loaded); err != nil || got != "" || !strings.Contains(out.String(), "not pinned") {
		t.Fatalf("no repository digest: %q, %v, said %q", got, err, out.String())
	}
	// A reference by digest is pinned by itself.
	if got, err := check("kindest/node:v1.33.1@" + digestC); err != nil || got != digestC || out.Len() != 0 {
		t.Fatalf("by digest: %q, %v, said %q", got, err, out.String())
	}
	if pinned, err := pins.read(); err != nil || !reflect.DeepEqual(pinned, map[string]string{ref: digestA}) {
		t.Fatalf("pins = %v, %v", pinned, err)
	}

	// Deleting the line, as the refusal says, trusts the new image.
	b, err := os.ReadFile(pins.path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), pinFileHeader) {
		t.Errorf("the pin file does not start with its header:\n%s", b)
	}
	if err := os.WriteFile(pins.path, []byte(strings.ReplaceAll(string(b), ref+" "+digestA+"\n", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := check(ref, repo+"@"+digestB); err != nil || got != digestB {
		t.Fatalf("after deleting the line: %q, %v", got, err)
	}

	// A line mangled by hand stops termlab with where it is.
	if err := os.WriteFile(pins.path, []byte(ref+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := check(ref, repo+"@"+digestB); err == nil || !strings.Contains(err.Error(), pins.path+":1:") {
		t.Fatalf("a mangled line: %v", err)
	}
}
