package scale

import (
	"encoding/json"
	"fmt"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/recorder"
	"github.com/termlab/termlab/internal/scaleruns"
)

// ClaimDeletePace: the API server's collection workers set the pace at which
// the pods without a finalizer are DELETED under the default limits, and
// raising them raises that pace.
const ClaimDeletePace = "scale.delete_pace_follows_collection_workers"

// defaultRunNote records the run with the default limits a raised run is
// compared with (scaleruns.Rates as JSON), as the run found it when it began.
const defaultRunNote = "compared with the default run: "

// raisedFaster is how much faster than the compared default run's marking a
// raised run must DELETE its pods: a tenth, so that a raised run merely as
// fast as one worker marks does not pass (the default runs' marking so far:
// 32.2, 32.7 and 33.3 pods/s, runs bd7c, 396d, c5bb).
const raisedFaster = 1.1

// deletePace decides ClaimDeletePace:
//   - one collection worker (the default): the pods were DELETED at
//     followsMarking of the rate the namespace controller's collection
//     delete marked them, or faster: nothing after the marking waited;
//   - more workers (raised): DELETED more than raisedFaster times as fast as
//     one worker marked the same number of pods in the latest passing
//     default run on record (defaultRunNote).
func deletePace(f *facts, fig Figures) claims.Claim {
	statement := fmt.Sprintf("The API server's collection workers (--delete-collection-workers) set the pace at which the pods without a finalizer are DELETED: with one worker (the default) they are DELETED at %.0f %% or more of the rate the namespace controller's collection delete marks them (first seen with a deletionTimestamp); with more workers (raised) they are DELETED over %.0f %% faster than one worker marked them in a default run of the same size on this machine.",
		100*followsMarking, 100*(raisedFaster-1))
	v := newVerdict(ClaimDeletePace, statement, eventsFile, recordFile)
	if !v.Require(f.limitsOK, "the run did not record the control plane's limits (the API server's command line)") {
		return v.Done()
	}
	workers := f.limits.DeleteCollectionWorkers
	asked := orDefault(f.size.Limits)
	v.Observe("limits_asked", asked)
	v.Observe("collection_workers", workers)
	v.Observe("marked_pods_per_second", fig.MarkedPerSecond)
	v.Observe("deleted_pods_per_second", fig.DeletedPerSecond)
	if !v.Require(fig.MarkedPerSecond > 0 && fig.DeletedPerSecond > 0, "the record holds no marking or no DELETED of the pods without a finalizer") {
		return v.Done()
	}
	switch {
	case workers <= 1 && asked == string(cluster.LimitsRaised):
		v.Require(false, "the run asked for raised limits, but its API server works a collection with %d worker(s)", workers)
	case workers <= 1:
		v.Require(followedMarking(fig),
			"the pods were DELETED at %.1f/s, under %.0f %% of the %.1f/s their collection delete marked them: something after the marking (kwok, %d pod stages at once) set the pace, not the collection worker",
			fig.DeletedPerSecond, 100*followsMarking, fig.MarkedPerSecond, f.limits.KwokPodPlayParallelism)
	case f.defaultRun == nil:
		v.NotChecked(fmt.Sprintf("no passing run of %d pods with the default limits in results/scale to compare with: run `go tool mage lab:scale -pods=%d -nodes=%d` first, then this one", f.size.Pods, f.size.Pods, f.size.FakeNodes))
	default:
		ref := f.defaultRun
		v.Observe("default_run", ref.RunID)
		v.Observe("default_marked_pods_per_second", ref.MarkedPerSecond)
		v.Observe("default_deleted_pods_per_second", ref.DeletedPerSecond)
		v.Require(fig.DeletedPerSecond > raisedFaster*ref.MarkedPerSecond,
			"with %d collection workers the pods were DELETED at %.1f/s, not over %.0f %% faster than one worker marked them in run %s (%.1f/s): raising the workers did not raise the deletion's pace",
			workers, fig.DeletedPerSecond, 100*(raisedFaster-1), ref.RunID, ref.MarkedPerSecond)
	}
	return v.Done()
}

// readDefaultRun reads defaultRunNote; nil when it names no run.
func readDefaultRun(text string) *scaleruns.Rates {
	var r scaleruns.Rates
	if json.Unmarshal([]byte(text), &r) != nil || r.RunID == "" {
		return nil
	}
	return &r
}

// noteDefaultRun records the latest passing default run of sz's size, which
// a raised run is compared with.
func noteDefaultRun(rec *recorder.Recorder, resultsDir string, sz Size) error {
	ref, err := scaleruns.Latest(resultsDir, func(r scaleruns.Rates) bool {
		return r.Limits == cluster.LimitsDefault && r.Pods == sz.Pods && r.MarkedPerSecond > 0
	})
	if err != nil || ref == nil {
		return err
	}
	b, _ := json.Marshal(ref)
	rec.Notef("%s%s", defaultRunNote, b)
	return nil
}
