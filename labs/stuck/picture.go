package stuck

import (
	"fmt"
	"strings"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// Kinds of the moments the picture numbers.
const (
	momentGraceDeadline = "grace-deadline"
	momentForceDelete   = "force-delete"
)

// Moments mark, on the pod's API lane, what its Terminating lane runs past:
// its grace deadline, and the request that finally removed it — the pod
// garbage collector's force delete, as the audit log names its sender (the
// DELETED event without an audit log).
func Moments(rec *evidence.Record) []report.Marker {
	var out []report.Marker
	for _, e := range rec.EventsFor(pod) {
		if e.DeletionTimestamp != nil {
			out = append(out, report.Marker{At: *e.DeletionTimestamp, Pod: pod, Kind: momentGraceDeadline,
				Label: fmt.Sprintf("%s: its grace deadline (deletionTimestamp); nobody finishes the delete", pod)})
			break
		}
	}
	for _, a := range rec.Audit {
		if a.Verb == "delete" && a.Resource == "pods" && a.Name == pod && a.Subresource == "" && a.Result == evidence.AuditGone {
			out = append(out, report.Marker{At: a.ReceivedAt, Pod: pod, Kind: momentForceDelete,
				Label: fmt.Sprintf("%s force-deleted by %s (gracePeriodSeconds %s, audit log)", pod, sender(a.User), grace0(a.GracePeriodSeconds))})
			return out
		}
	}
	if e, ok := rec.Deleted(pod); ok {
		out = append(out, report.Marker{At: e.ObservedAt, Pod: pod, Kind: momentForceDelete,
			Label: fmt.Sprintf("%s DELETED (no audit log: who sent the delete is not recorded)", pod)})
	}
	return out
}

// sender is an audit user as a person reads it: the pod GC by its name.
func sender(user string) string {
	if user == claims.PodGCUser {
		return "the pod garbage collector"
	}
	return strings.TrimPrefix(user, "system:serviceaccount:")
}

func grace0(g *int64) string {
	if g == nil {
		return "not set"
	}
	return fmt.Sprint(*g)
}
