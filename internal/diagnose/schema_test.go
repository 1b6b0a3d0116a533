package diagnose

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

// The JSON fields are the documented ones (schema.go, README.md): a change to
// a struct tag of the summary is a change to a public format.
func TestSummarySchema(t *testing.T) {
	tests := []struct {
		name string
		typ  reflect.Type
		want []string
	}{
		{"Summary", reflect.TypeOf(Summary{}), SummaryFields},
		{"NamespaceSummary", reflect.TypeOf(NamespaceSummary{}), NamespaceSummaryFields},
		{"Finding", reflect.TypeOf(Finding{}), FindingFields},
		{"PodAnswer", reflect.TypeOf(PodAnswer{}), PodAnswerFields},
	}
	for _, tc := range tests {
		got := jsonFields(tc.typ)
		want := append([]string(nil), tc.want...)
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s's JSON fields are %v, documented %v: update schema.go and README.md (\"JSON output\") with the change", tc.name, got, want)
		}
	}
}

// jsonFields are the names encoding/json gives t's fields, embedded structs flattened.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		switch {
		case name == "-" || !f.IsExported():
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			out = append(out, jsonFields(f.Type)...)
		case name == "":
			out = append(out, f.Name)
		default:
			out = append(out, name)
		}
	}
	return out
}
