package nodeimage

import (
	"strings"
	"testing"
)

// One preloaded tag per base reference: the release stays readable, and an
// official and a built base of one release (or two digests) never share one.
func TestPreloadedRef(t *testing.T) {
	official := PreloadedRef("kindest/node:v1.37.0@sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5")
	built := PreloadedRef("termlab.local/node:v1.37.0")
	other := PreloadedRef("kindest/node:v1.37.0@sha256:0000000000000000000000000000000000000000000000000000000000000000")
	for _, ref := range []string{official, built, other} {
		if !strings.HasPrefix(ref, "termlab.local/node-preloaded:v1.37.0-") {
			t.Errorf("%s: want termlab.local/node-preloaded:v1.37.0-<hash>", ref)
		}
	}
	if official == built || official == other {
		t.Errorf("distinct bases share a tag: %s %s %s", official, built, other)
	}
	if PreloadedRef("termlab.local/node:v1.37.0") != built {
		t.Error("the same base got another tag")
	}
	// A registry with a port and no tag: the port is not a tag.
	if ref := PreloadedRef("localhost:5000/node"); !strings.HasPrefix(ref, "termlab.local/node-preloaded:latest-") {
		t.Errorf("untagged base: got %s", ref)
	}
}
