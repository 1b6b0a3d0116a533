package gobuild

import "strings"

// Stamp is one `-X importpath.name=value` linker flag: it sets a package-level
// string variable at link time, which is how every component here records its version.
type Stamp struct {
	Pkg   string // import path, e.g. "k8s.io/component-base/version"
	Var   string // variable name, e.g. "gitVersion"
	Value string
}

// LDFlags renders extra flags (e.g. "-s", "-w") and stamps as one -ldflags value,
// in the given order. A value holding a space or a quote is quoted the way the go
// command splits -ldflags (cmd/internal/quoted): single quotes, or double quotes
// when the value itself holds a single quote.
func LDFlags(extra []string, stamps ...Stamp) string {
	fields := make([]string, 0, len(extra)+2*len(stamps))
	fields = append(fields, extra...)
	for _, s := range stamps {
		fields = append(fields, "-X", quoteField(s.Pkg+"."+s.Var+"="+s.Value))
	}
	return strings.Join(fields, " ")
}

func quoteField(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\r'\"") {
		return s
	}
	if !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	// cmd/internal/quoted has no escapes: a value with both quote kinds cannot be passed.
	return `"` + s + `"`
}

// stampAll sets the same variables in every package, e.g. Kubernetes' version
// in both k8s.io/component-base/version and k8s.io/client-go/pkg/version.
func stampAll(pkgs []string, vars [][2]string) []Stamp {
	var out []Stamp
	for _, kv := range vars {
		for _, p := range pkgs {
			out = append(out, Stamp{Pkg: p, Var: kv[0], Value: kv[1]})
		}
	}
	return out
}
