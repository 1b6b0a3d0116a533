package matrix

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/termlab/termlab/internal/gobuild"
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
// patch ("v1.36.3": a node image is built from exactly that release) or
// "v1.36.x" for the newest patch the module proxy serves (ResolveVersions),
// no duplicates, in the order given.
func ParseVersions(list string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		var s string
		if minor, ok := strings.CutSuffix(f, ".x"); ok {
			v, err := ParseVersion(minor)
			if err != nil || strings.Count(strings.TrimPrefix(minor, "v"), ".") != 1 {
				return nil, fmt.Errorf("version %q is not v<major>.<minor>.x", f)
			}
			s = fmt.Sprintf("v%d.%d.x", v.Major, v.Minor)
		} else {
			v, err := ParseVersion(f)
			if err != nil {
				return nil, err
			}
			if strings.Count(strings.TrimPrefix(f, "v"), ".") != 2 {
				return nil, fmt.Errorf("version %q needs its patch release (e.g. v1.36.3) or .x (v1.36.x: the newest served)", f)
			}
			s = v.String()
		}
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

// ResolveVersions replaces every "v1.36.x" of ParseVersions' list with the
// newest release of that minor in served (k8s.io/kubernetes versions on the
// module proxy; pre-releases never count). Exact releases stay as they are.
func ResolveVersions(requested, served []string) ([]string, error) {
	out := make([]string, 0, len(requested))
	seen := map[string]bool{}
	for _, r := range requested {
		minor, wild := strings.CutSuffix(r, ".x")
		if !wild {
			out = append(out, r)
			seen[r] = true
			continue
		}
		want, err := ParseVersion(minor)
		if err != nil {
			return nil, err
		}
		var best *Version
		for _, s := range served {
			v, err := ParseVersion(s)
			if err != nil || v.Major != want.Major || v.Minor != want.Minor {
				continue // another minor, or a pre-release (v1.38.0-beta.0 does not parse)
			}
			if best == nil || best.Less(v) {
				b := v
				best = &b
			}
		}
		if best == nil {
			return nil, fmt.Errorf("the module proxy serves no release of %s (k8s.io/kubernetes)", r)
		}
		if seen[best.String()] {
			return nil, fmt.Errorf("%s is %s, which is listed already", r, best)
		}
		seen[best.String()] = true
		out = append(out, best.String())
	}
	return out, nil
}

// Wildcards reports whether a ParseVersions list needs ResolveVersions.
func Wildcards(requested []string) bool {
	for _, r := range requested {
		if strings.HasSuffix(r, ".x") {
			return true
		}
	}
	return false
}

// ClusterName is the kind cluster of a release in the matrix:
// v1.36.3 -> termlab-v1-36-3. Never "termlab", the shared cluster's name.
func ClusterName(version string) string {
	return "termlab-" + strings.ReplaceAll(version, ".", "-")
}

// Versions reads a -k8s list (ParseVersions) and resolves its .x entries
// against the k8s.io/kubernetes releases the module proxy serves (one
// `go list -m -versions`, only when there is such an entry).
func Versions(ctx context.Context, list string) ([]string, error) {
	req, err := ParseVersions(list)
	if err != nil || !Wildcards(req) {
		return req, err
	}
	served, err := gobuild.ModuleVersions(ctx, "k8s.io/kubernetes")
	if err != nil {
		return nil, err
	}
	return ResolveVersions(req, served)
}
