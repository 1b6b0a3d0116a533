package claims

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/ledger"
)

// Claims about one identity (a StatefulSet pod's name) and the processes
// that carry it: its incarnations in the API (one UID each) and their
// writes to the ledger (internal/ledger), which stamps every write on
// arrival with its own node's clock (ledgerClock): a timing or a window
// against the record's times goes through Between, like any other clock's.

// Incarnations are the UIDs that carried the pod's name, in order of
// appearance: the first is the original, the second its replacement.
func incarnations(k *check, rec *evidence.Record, pod string, want int) ([]string, bool) {
	uids := rec.UIDsOf(pod)
	k.cite(eventsFile)
	k.observe("uids", uids)
	return uids, k.require(len(uids) >= want, "the pod watch saw %d UID(s) for %s, the claim needs %d", len(uids), pod, want)
}

// lastLedger is the last ledger read, or fails the check.
func lastLedger(k *check, rec *evidence.Record) (evidence.LedgerRead, bool) {
	l, ok := rec.LastLedger()
	if !k.require(ok, "the ledger was never read") {
		return l, false
	}
	k.cite(l.Path)
	k.observe("ledger_read_at", stamp(l.At))
	k.observe("ledger_clock", ledgerClock(rec, l))
	return l, true
}

// ledgerClock is the clock that stamped the ledger's writes. On a cluster
// whose machines are the host's (SharesHostClock) it is the node its pod ran
// on (the Service's Deployment's pod, as the pod watch saw it): the host's
// own clock, exact. Elsewhere it is the ledger's clock as the run read it
// from the ledger itself (evidence.ClockLedger), else that node's (measured
// where termlab had a node pod there), else, when the record names no node,
// the ledger's clock unmeasured.
func ledgerClock(rec *evidence.Record, l evidence.LedgerRead) string { return LedgerClock(rec, l) }

// LedgerClock is ledgerClock, for a lab's report that puts the writes on
// the host's clock.
func LedgerClock(rec *evidence.Record, l evidence.LedgerRead) string {
	svc, _, _ := strings.Cut(l.Service, ":")
	if !rec.SharesHostClock() {
		if _, ok := rec.ClockOffsetOf(evidence.ClockLedger(svc)); ok {
			return evidence.ClockLedger(svc)
		}
	}
	node := ""
	_ = rec.EachPodEvent(func(e evidence.PodEvent) bool {
		if strings.HasPrefix(e.Name, svc+"-") && e.NodeName != "" {
			node = e.NodeName
			return false
		}
		return true
	})
	if node == "" {
		return evidence.ClockLedger(svc)
	}
	return evidence.ClockNode(node)
}

// readOn is the moment of s as the clock reads it, and what converting it
// cost: the interval between the two readings of that moment (its
// uncertainty, the offsets used, the clocks the run did not measure).
func readOn(rec *evidence.Record, s evidence.Stamp, clock string) (time.Time, evidence.Interval) {
	iv := rec.Between(s, evidence.Stamp{Time: s.Time, Clock: clock})
	return s.Time.Add(-iv.D), iv
}

// windowOn is [from, to], two stamps, read on the clock and narrowed by the
// clocks' uncertainty at each end: a time of that clock inside it lies
// between them whatever the clocks' error. A clock the run did not measure
// leaves the claim not checked, naming it, as does an uncertainty that
// leaves no window (ok false either way). what names the window.
func windowOn(k *check, rec *evidence.Record, clock string, from, to evidence.Stamp, what string) (lo, hi time.Time, ok bool) {
	lo, fromIv := readOn(rec, from, clock)
	hi, toIv := readOn(rec, to, clock)
	for _, iv := range []evidence.Interval{fromIv, toIv} {
		if len(iv.Unmeasured) > 0 {
			k.withinClocks(iv, noLowerBound, noUpperBound, what) // not checked, naming the clock
			return time.Time{}, time.Time{}, false
		}
	}
	lo, hi = lo.Add(fromIv.Uncertainty), hi.Add(-toIv.Uncertainty)
	if lo.After(hi) {
		if k.notChecked == "" {
			k.notChecked = fmt.Sprintf("not checked: %s is shorter than the clocks' uncertainty (± %.3f s at its start, ± %.3f s at its end)", what, seconds(fromIv.Uncertainty), seconds(toIv.Uncertainty))
		}
		return time.Time{}, time.Time{}, false
	}
	return lo, hi, true
}

// writesOf are the ledger entries of the UID received in [from, to] (zero
// times leave that end open).
func writesOf(entries []ledger.Entry, uid string, from, to time.Time) []ledger.Entry {
	var out []ledger.Entry
	for _, e := range entries {
		if (uid == "" || e.UID == uid) && (from.IsZero() || !e.ReceivedAt.Before(from)) && (to.IsZero() || !e.ReceivedAt.After(to)) {
			out = append(out, e)
		}
	}
	return out
}

func writers(entries []ledger.Entry) []string {
	var out []string
	for _, e := range entries {
		if !slices.Contains(out, e.UID) {
			out = append(out, e.UID)
		}
	}
	return out
}

// containerOf is the container ID the API reported for the pod's incarnation uid.
func containerOf(rec *evidence.Record, pod, uid string) (id, node string, ok bool) {
	for _, e := range rec.EventsFor(pod) {
		if e.UID != uid {
			continue
		}
		for _, c := range e.Containers {
			if c.ContainerID != "" {
				return c.ContainerID, e.NodeName, true
			}
		}
	}
	return "", "", false
}

// Single: no second incarnation while the first is Terminating.
type Single struct {
	ID, Statement string
	Pod           string
	// Delete and Until are the action kinds that open and close the window
	// (the ordinary delete, the force delete).
	Delete, Until evidence.ActionKind
	// MinWindow is a precondition (see Precondition): termlab sends the
	// Until request no sooner than this after the Delete request.
	MinWindow time.Duration
}

// NoSecondIncarnation decides that from the Delete to the Until request the
// pod's name had one UID in the API (the pod watch up throughout: an absence
// is claimed) and the ledger one writer, that UID, which kept writing. How
// long termlab leaves between the two requests is the claim's precondition.
func NoSecondIncarnation(rec *evidence.Record, s Single) Claim {
	k := newCheck(s.ID, s.Statement)
	del, ok := action(k, rec, s.Delete, s.Pod)
	if !ok {
		return k.done()
	}
	until, ok := action(k, rec, s.Until, s.Pod)
	if !ok {
		return k.done()
	}
	from, to := del.StartedAt, until.StartedAt
	k.precondition("window_seconds", fmt.Sprintf("termlab sends the %s request no sooner than %s after the %s request", s.Until, InSeconds(s.MinWindow), s.Delete), s.MinWindow, to.Sub(from), true)
	uids, ok := incarnations(k, rec, s.Pod, 1)
	if !ok {
		return k.done()
	}
	var inWindow []string
	for _, e := range rec.EventsFor(s.Pod) {
		if !e.ObservedAt.After(to) && !slices.Contains(inWindow, e.UID) {
			inWindow = append(inWindow, e.UID)
		}
	}
	k.observe("uids_until_"+snake(string(s.Until)), inWindow)
	k.contradicts(len(inWindow) == 1, "the pod watch saw %d UIDs for %s before the %s: %v", len(inWindow), s.Pod, s.Until, inWindow)
	k.watchedThroughout(rec, evidence.WatchPods, from, to)

	l, ok := lastLedger(k, rec)
	if !ok {
		return k.done()
	}
	// The window is the host's (or the API server's); the writes are the
	// ledger's: only those inside it whatever the clocks' error count.
	lo, hi, ok := windowOn(k, rec, ledgerClock(rec, l), rec.ActionStamp(del), rec.ActionStamp(until), fmt.Sprintf("the window from the %s to the %s", s.Delete, s.Until))
	if !ok {
		return k.done()
	}
	during := writesOf(l.Entries, "", lo, hi)
	who := writers(during)
	k.observe("ledger_writes_in_window", len(during))
	k.observe("ledger_writers_in_window", who)
	k.require(len(during) > 0, "the ledger received no write between the %s and the %s", s.Delete, s.Until)
	k.contradicts(len(who) <= 1, "the ledger had %d writers between the %s and the %s: %v", len(who), s.Delete, s.Until, who)
	k.contradicts(len(who) == 0 || who[0] == uids[0], "the ledger's one writer in the window was %s, not the original %s", firstOr(who), uids[0])
	return k.done()
}

// Replaced: a new incarnation after the old one is gone from the API.
type Replaced struct {
	ID, Statement string
	Pod           string
	// After is the action kind that removed the old incarnation (the force delete).
	After evidence.ActionKind
	// GoneWithin bounds its DELETED event after the request; CreatedWithin
	// the new incarnation's ADDED event after that DELETED.
	GoneWithin, CreatedWithin time.Duration
}

// ReplacedOnAnotherNode decides that after the request the original
// incarnation was DELETED within GoneWithin, a new UID for the same name was
// ADDED within CreatedWithin of that, and it ran Ready on another node.
func ReplacedOnAnotherNode(rec *evidence.Record, r Replaced) Claim {
	k := newCheck(r.ID, r.Statement)
	act, ok := action(k, rec, r.After, r.Pod)
	if !ok {
		return k.done()
	}
	uids, ok := incarnations(k, rec, r.Pod, 2)
	if !ok {
		return k.done()
	}
	gone, ok := rec.FirstEvent(r.Pod, act.StartedAt, func(e evidence.PodEvent) bool { return e.Type == "DELETED" && e.UID == uids[0] })
	if !ok {
		return k.missing("no DELETED event of the original %s (uid %s) after the %s", r.Pod, uids[0], r.After)
	}
	goneAfter := since(rec, act, gone.ObservedAt)
	k.observeInterval("deleted_after_seconds", goneAfter)
	k.require(k.withinClocks(goneAfter, noLowerBound, r.GoneWithin, fmt.Sprintf("the time from the %s to the original's DELETED event", r.After)), "the original was DELETED %s after the %s, later than %s", goneAfter.D.Round(time.Millisecond), r.After, r.GoneWithin)
	added, ok := rec.FirstEvent(r.Pod, time.Time{}, func(e evidence.PodEvent) bool { return e.UID == uids[1] })
	if !ok {
		return k.missing("no event of the new incarnation %s", uids[1])
	}
	created := added.ObservedAt.Sub(gone.ObservedAt)
	k.observe("new_uid", uids[1])
	k.observe("created_after_deleted_seconds", seconds(created))
	k.require(added.Type == "ADDED", "the new incarnation was first seen as %s, not ADDED", added.Type)
	k.require(created >= 0, "the new incarnation was ADDED %s before the original was DELETED", (-created).Round(time.Millisecond))
	k.require(created <= r.CreatedWithin, "the new incarnation was ADDED %s after the original was DELETED, later than %s", created.Round(time.Millisecond), r.CreatedWithin)
	k.watchedThroughout(rec, evidence.WatchPods, act.StartedAt, added.ObservedAt)
	// Who created it, where the API says so: the controller's own event
	// (observed, not required: events are best effort and aggregated).
	for _, e := range rec.KubeEvents {
		if e.Reason == "SuccessfulCreate" && strings.Contains(e.Message, "Pod "+r.Pod+" ") && !e.ObservedAt.Before(act.StartedAt) {
			k.cite(evidence.KubeEventsFile)
			k.observe("created_by", e.Source+": "+e.Message)
			break
		}
	}
	_, oldNode, _ := containerOf(rec, r.Pod, uids[0])
	ready, ok := rec.FirstEvent(r.Pod, added.ObservedAt, func(e evidence.PodEvent) bool {
		c, ok := e.Container("")
		return e.UID == uids[1] && e.Type != "DELETED" && e.Ready == "True" && ok && c.State == "running"
	})
	if !k.require(ok, "the new incarnation was never seen Ready with its container running") {
		return k.done()
	}
	k.observe("old_node", oldNode)
	k.observe("new_node", ready.NodeName)
	k.observe("ready_after_deleted_seconds", seconds(ready.ObservedAt.Sub(gone.ObservedAt)))
	k.require(ready.NodeName != "" && ready.NodeName != oldNode, "the new incarnation ran on %q, the original's node %q", ready.NodeName, oldNode)
	return k.done()
}

// Split: two incarnations writing at once.
type Split struct {
	ID, Statement string
	Pod           string
	// MinOverlap is how long both must have written in the same window;
	// MinAlternations how often the ledger's arrival order must switch
	// between them in it (interleaved, not one after the other).
	MinOverlap      time.Duration
	MinAlternations int
}

// SplitBrain decides from the ledger that the original and the new
// incarnation wrote in the same window for at least MinOverlap, interleaved,
// and from crictl that both containers ran, on two nodes, inside it.
func SplitBrain(rec *evidence.Record, s Split) Claim {
	k := newCheck(s.ID, s.Statement)
	if !k.needsNode(rec) {
		return k.done()
	}
	uids, ok := incarnations(k, rec, s.Pod, 2)
	if !ok {
		return k.done()
	}
	l, ok := lastLedger(k, rec)
	if !ok {
		return k.done()
	}
	old, repl := writesOf(l.Entries, uids[0], time.Time{}, time.Time{}), writesOf(l.Entries, uids[1], time.Time{}, time.Time{})
	if !k.require(len(old) > 0 && len(repl) > 0, "the ledger holds %d writes of the original and %d of the new incarnation", len(old), len(repl)) {
		return k.done()
	}
	from := later(old[0].ReceivedAt, repl[0].ReceivedAt)
	to := old[len(old)-1].ReceivedAt
	if t := repl[len(repl)-1].ReceivedAt; t.Before(to) {
		to = t
	}
	overlap := to.Sub(from)
	k.observe("overlap_from", stamp(from))
	k.observe("overlap_to", stamp(to))
	k.observe("overlap_seconds", seconds(overlap))
	if !k.require(overlap >= s.MinOverlap, "the two incarnations wrote in a common window of %s, the claim needs %s", overlap.Round(time.Millisecond), s.MinOverlap) {
		return k.done()
	}
	both := writesOf(l.Entries, "", from, to)
	alternations, oldNodes, newNodes := 0, []string{}, []string{}
	last := ""
	counts := map[string]int{}
	for _, e := range both {
		if e.UID != uids[0] && e.UID != uids[1] {
			continue
		}
		counts[e.UID]++
		if last != "" && e.UID != last {
			alternations++
		}
		last = e.UID
		switch {
		case e.UID == uids[0] && !slices.Contains(oldNodes, e.Node):
			oldNodes = append(oldNodes, e.Node)
		case e.UID == uids[1] && !slices.Contains(newNodes, e.Node):
			newNodes = append(newNodes, e.Node)
		}
	}
	k.observe("original_writes_in_overlap", counts[uids[0]])
	k.observe("new_writes_in_overlap", counts[uids[1]])
	k.observe("alternations", alternations)
	k.observe("original_wrote_from", oldNodes)
	k.observe("new_wrote_from", newNodes)
	k.require(alternations >= s.MinAlternations, "the ledger's order switched %d times between the incarnations in the overlap, the claim needs %d (interleaved writes)", alternations, s.MinAlternations)
	k.require(len(oldNodes) == 1 && len(newNodes) == 1 && oldNodes[0] != newNodes[0], "the incarnations wrote from nodes %v and %v, not one node each, two nodes", oldNodes, newNodes)

	// The runtime's word, on both nodes, inside the window: crictl's looks
	// are the host's times, the window the ledger's.
	lc := ledgerClock(rec, l)
	lookFrom, lookTo, ok := windowOn(k, rec, evidence.ClockHost, evidence.Stamp{Time: from, Clock: lc}, evidence.Stamp{Time: to, Clock: lc}, "the ledger's window in which both wrote")
	if !ok {
		return k.done()
	}
	for i, uid := range uids[:2] {
		who := []string{"original", "new"}[i]
		id, node, ok := containerOf(rec, s.Pod, uid)
		if !k.require(ok, "the API never reported a container for the %s incarnation", who) {
			continue
		}
		running := 0
		for _, o := range rec.ContainersFor(s.Pod) {
			if o.ContainerID == id && o.Node == node && !o.ObservedAt.Before(lookFrom) && !o.ObservedAt.After(lookTo) && o.State == evidence.ContainerRunning {
				running++
				k.cite(o.InspectPath)
			}
		}
		k.observe(who+"_running_looks_in_overlap", running)
		k.require(running > 0, "no crictl look on %s inside the overlap showed the %s incarnation's container %s running", node, who, id)
	}
	return k.done()
}

// Again: one writer again once the old process is killed.
type Again struct {
	ID, Statement string
	Pod           string
	// After is the action kind that brings the old node's kubelet back.
	After evidence.ActionKind
	// Within bounds the original's last write after that request.
	Within time.Duration
	// MinAlone is a precondition (see Precondition): termlab reads the
	// ledger no sooner than this after the original's last write.
	MinAlone time.Duration
	// WriteEvery is the writers' period: the new incarnation's last write
	// must reach the ledger within it and an allowance for the write's
	// delivery (WatchAllowance) before the read. 0: not required.
	WriteEvery time.Duration
}

// OneWriterAgain decides from the ledger that the original incarnation wrote
// until the request and no later than Within after it, and that the new one
// then wrote alone, still writing when termlab read the ledger. How long
// termlab lets it write alone before that read is the claim's precondition.
func OneWriterAgain(rec *evidence.Record, a Again) Claim {
	k := newCheck(a.ID, a.Statement)
	act, ok := action(k, rec, a.After, targetOf(rec, a.After, a.Pod))
	if !ok {
		return k.done()
	}
	uids, ok := incarnations(k, rec, a.Pod, 2)
	if !ok {
		return k.done()
	}
	l, ok := lastLedger(k, rec)
	if !ok {
		return k.done()
	}
	old := writesOf(l.Entries, uids[0], time.Time{}, time.Time{})
	if !k.require(len(old) > 0, "the ledger holds no write of the original incarnation") {
		return k.done()
	}
	lastOld := old[len(old)-1]
	// The ledger stamps a write with its own node's clock.
	after := rec.Between(rec.ActionStamp(act), evidence.Stamp{Time: lastOld.ReceivedAt, Clock: ledgerClock(rec, l)})
	what := fmt.Sprintf("the time from the %s to the original's last write in the ledger", a.After)
	k.observe("original_last_write_at", stamp(lastOld.ReceivedAt))
	k.observe("original_last_seq", lastOld.Seq)
	k.observeInterval("original_last_write_after_seconds", after)
	k.require(k.withinClocks(after, 0, noUpperBound, what), "the original's last write came %s before the %s: it had stopped writing already", (-after.D).Round(time.Millisecond), a.After)
	k.require(k.withinClocks(after, noLowerBound, a.Within, what), "the original still wrote %s after the %s, later than %s", after.D.Round(time.Millisecond), a.After, a.Within)
	// The last write is the ledger's time, the read the host's: the hold is
	// the least the clocks allow (unknown with an unmeasured clock).
	hold := rec.Between(evidence.Stamp{Time: lastOld.ReceivedAt, Clock: ledgerClock(rec, l)}, evidence.OnHost(l.At))
	k.precondition("alone_seconds", fmt.Sprintf("termlab lets the new incarnation write alone for %s before it reads the ledger (from the original's last write to the read)", InSeconds(a.MinAlone)), a.MinAlone, hold.D-hold.Uncertainty, len(hold.Unmeasured) == 0)
	alone := writesOf(l.Entries, "", lastOld.ReceivedAt.Add(time.Nanosecond), time.Time{})
	who := writers(alone)
	k.observe("writers_after", who)
	k.observe("writes_after", len(alone))
	k.contradicts(len(who) == 1 && who[0] == uids[1], "after the original's last write the ledger's writers were %v, not the new incarnation alone", who)
	if len(alone) > 0 && a.WriteEvery > 0 {
		// The write is stamped on the ledger's node's clock, the read on the host's.
		gap := rec.Between(evidence.Stamp{Time: alone[len(alone)-1].ReceivedAt, Clock: ledgerClock(rec, l)}, evidence.OnHost(l.At))
		k.observeInterval("new_last_write_before_read_seconds", gap)
		k.require(k.withinClocks(gap, noLowerBound, a.WriteEvery+WatchAllowance, "the time from the new incarnation's last write to termlab's read of the ledger"),
			"the new incarnation's last write reached the ledger %s before termlab read it, more than its %s write period and %s: it had stopped writing", gap.D.Round(time.Millisecond), a.WriteEvery, WatchAllowance)
	}
	return k.done()
}

func firstOr(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return s[0]
}

func snake(kind string) string {
	out := []byte(kind)
	for i, c := range out {
		if c == '-' {
			out[i] = '_'
		}
	}
	return string(out)
}
