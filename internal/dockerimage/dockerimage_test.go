package dockerimage

import (
	"reflect"
	"testing"
)

func TestChangesAreDeterministic(t *testing.T) {
	o := ImportOptions{
		Entrypoint: []string{"/pause"},
		Env:        []string{"PATH=/usr/sbin:/usr/bin"},
		Labels:     map[string]string{"b": "2", "a": "1"},
	}
	want := []string{`ENTRYPOINT ["/pause"]`, "ENV PATH=/usr/sbin:/usr/bin", `LABEL a="1"`, `LABEL b="2"`}
	if got := o.Changes(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
}
