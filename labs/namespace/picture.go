package namespace

import (
	"strings"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// Moment kinds on the picture: a namespace's conditions naming its hold,
// and the namespace gone.
const (
	MomentHeld = "held"
	MomentGone = "namespace-gone"
)

// Moments are the picture's marks besides the lab's actions: for each of
// the run's namespaces, the first watch event whose conditions said True
// (what held it, in its own words) and its DELETED.
func Moments(rec *evidence.Record) []report.Marker {
	var out []report.Marker
	seen := map[string]bool{}
	for _, e := range rec.NamespaceEvents {
		short := strings.TrimPrefix(strings.TrimPrefix(e.Name, rec.Namespace), "-")
		if short == "" {
			short = "the run's namespace"
		}
		switch {
		case e.Type == "DELETED":
			out = append(out, report.Marker{At: e.ObservedAt, Label: short + " gone (its DELETED)", Kind: MomentGone})
		case e.DeletionTimestamp != nil && !seen[e.Name]:
			var said []string
			for _, c := range e.Conditions {
				if c.Status == "True" {
					said = append(said, c.Type)
				}
			}
			if len(said) > 0 {
				seen[e.Name] = true
				out = append(out, report.Marker{At: e.ObservedAt, Label: short + ": " + strings.Join(said, ", "), Kind: MomentHeld})
			}
		}
	}
	return out
}
