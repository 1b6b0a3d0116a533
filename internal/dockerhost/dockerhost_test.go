package dockerhost

import (
	"reflect"
	"testing"
)

func TestWithWrapperRuntimeKeepsOtherSettings(t *testing.T) {
	in := map[string]any{
		"log-level": "warn",
		"runtimes":  map[string]any{"nvidia": map[string]any{"path": "/usr/bin/nvidia-container-runtime"}},
	}
	got := WithWrapperRuntime(in, "/w")
	want := map[string]any{
		"log-level": "warn",
		"runtimes": map[string]any{
			"nvidia":       map[string]any{"path": "/usr/bin/nvidia-container-runtime"},
			"termlab-runc": map[string]any{"path": "/w"},
		},
		"default-runtime": "termlab-runc",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if _, changed := in["default-runtime"]; changed {
		t.Fatal("input map was modified")
	}
}
