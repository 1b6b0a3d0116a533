package matrix

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a Kubernetes release, v<major>.<minor>.<patch>.
type Version struct{ Major, Minor, Patch int }

// ParseVersion reads "v1.36.3" (or "1.36.3"). A bound like "v1.27" has patch 0.
func ParseVersion(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.Split(t, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("version %q is not v<major>.<minor>[.<patch>]", s)
	}
	var n [3]int
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 {
			return Version{}, fmt.Errorf("version %q is not v<major>.<minor>[.<patch>]", s)
		}
		n[i] = x
	}
	return Version{n[0], n[1], n[2]}, nil
}

func (v Version) String() string { return fmt.Sprintf("v%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Less orders releases.
func (v Version) Less(w Version) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor < w.Minor
	}
	return v.Patch < w.Patch
}

// ParseVersions reads the -k8s list: comma-separated releases, each with its
// patch ("v1.36.3": a node image is built from exactly that release), no
// duplicates, in the order given.
func ParseVersions(list string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := ParseVersion(f)
		if err != nil {
			return nil, err
		}
		if strings.Count(strings.TrimPrefix(f, "v"), ".") != 2 {
			return nil, fmt.Errorf("version %q needs its patch release (e.g. v1.36.3)", f)
		}
		s := v.String()
		if seen[s] {
			return nil, fmt.Errorf("version %s is listed twice", s)
		}
		seen[s] = true
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no Kubernetes version in %q: want e.g. -k8s=v1.37.2,v1.36.3", list)
	}
	return out, nil
}

// ClusterName is the kind cluster of a release in the matrix:
// v1.36.3 -> termlab-v1-36-3. Never "termlab", the shared cluster's name.
func ClusterName(version string) string {
	return "termlab-" + strings.ReplaceAll(version, ".", "-")
}
