package mount

import (
	"fmt"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// Kinds of the moments the picture numbers.
const (
	momentTeardownFailed = "teardown-failed"
	momentRetry          = "unmount-retry"
)

// Moments mark, on the pod's API lane, what its Terminating lane waits
// for: the kubelet's failed unmounts while the mount is busy (each one, from
// its journal), and the retry time its last failure before the release set
// — the moment the pod could go.
func Moments(rec *evidence.Record) []report.Marker {
	var out []report.Marker
	rel, released := firstOf(rec, evidence.ActionReleaseMount)
	var last *teardown
	n := 0
	for _, t := range teardowns(rec) {
		if !t.Failed || (released && !before(rec, t.onNode(), rec.ActionStamp(rel))) {
			continue
		}
		n++
		t := t
		last = &t
		out = append(out, report.Marker{At: t.entry.At, Pod: pod, Kind: momentTeardownFailed,
			Label: fmt.Sprintf("kubelet: unmount of %s failed (%d), target is busy; next try in %s", volume, n, t.Backoff)})
	}
	if last != nil && !last.RetryAt.IsZero() {
		out = append(out, report.Marker{At: last.RetryAt, Pod: pod, Kind: momentRetry,
			Label: fmt.Sprintf("the kubelet's next unmount try after its last failure (No retries permitted until, %s back-off)", last.Backoff)})
	}
	return out
}
