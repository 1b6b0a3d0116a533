package lab

import (
	"fmt"
	"strings"
)

// Select picks labs from a registry by a comma-separated list of names
// ("lab:" prefixes allowed), in the list's order, each once. An unknown
// name is an error that lists the known ones.
func Select(all []Definition, list string) ([]Definition, error) {
	byName := map[string]Definition{}
	var known []string
	for _, d := range all {
		byName[d.Name] = d
		known = append(known, d.Name)
	}
	var out []Definition
	seen := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimPrefix(strings.TrimSpace(n), "lab:")
		if n == "" || seen[n] {
			continue
		}
		d, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("no lab %q (labs: %s)", n, strings.Join(known, ", "))
		}
		seen[n] = true
		out = append(out, d)
	}
	return out, nil
}
