package mutants

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// moved is how far the stream operators move a recorded time (an audit
// entry's, a ledger write's, a task exit's) and a clock's offset: beyond
// every allowance of internal/claims/bounds.go but KubeletStartAllowance's
// upper spread, and short of the seconds-long windows the labs hold.
const moved = 2 * time.Second

// actionMutants each drop one of the lab's actions, or move it (its start
// and end together) so that its distance to what follows (the next action's
// start, the run's end after the last) is doubled or halved, or 2 s earlier
// or later (actions sent back to back are milliseconds apart, which a
// doubling barely moves): the lab acted earlier or later than the record
// says.
func actionMutants(rec *evidence.Record) []Mutant {
	var out []Mutant
	for i, a := range rec.Actions {
		what := fmt.Sprintf("action %d (%s %s)", i, a.Kind, a.Target)
		out = append(out, Mutant{OpAction, fmt.Sprintf("%s dropped", what),
			func(r *evidence.Record) { r.Actions = slices.Delete(r.Actions, i, i+1) }})
		if a.StartedAt.IsZero() || a.FinishedAt.IsZero() {
			continue
		}
		next := rec.EndedAt
		if i+1 < len(rec.Actions) {
			next = rec.Actions[i+1].StartedAt
		}
		type move struct {
			how   string
			shift time.Duration
		}
		moves := []move{{fmt.Sprintf("%s earlier", moved), -moved}, {fmt.Sprintf("%s later", moved), moved}}
		if d := next.Sub(a.FinishedAt); d > 0 {
			moves = append(moves, move{"earlier: its distance to what follows ×2", -d}, move{"later: its distance to what follows ×0.5", d / 2})
		}
		for _, s := range moves {
			out = append(out, Mutant{OpAction, fmt.Sprintf("%s %s", what, s.how),
				func(r *evidence.Record) {
					r.Actions[i].StartedAt = r.Actions[i].StartedAt.Add(s.shift)
					r.Actions[i].FinishedAt = r.Actions[i].FinishedAt.Add(s.shift)
				}})
		}
	}
	return out
}

// auditMutants each drop one audit entry, give it another user (the next
// one the log names, in first-seen order) or another verb (a delete made a
// patch, anything else a delete), or move it 2 s later. A record whose
// audit events stay on disk (evidence.Record.AuditOnDisk) is not mutated:
// its Audit field is empty, and a note says so.
func auditMutants(rec *evidence.Record) ([]Mutant, []string) {
	if rec.AuditCount() > len(rec.Audit) {
		return nil, []string{fmt.Sprintf("%s: the %d audit events are read from disk, not mutated", OpAudit, rec.AuditCount())}
	}
	var users []string
	for _, e := range rec.Audit {
		if !slices.Contains(users, e.User) {
			users = append(users, e.User)
		}
	}
	otherUser := func(u string) string {
		if len(users) < 2 {
			return "system:serviceaccount:default:mutant"
		}
		return users[(slices.Index(users, u)+1)%len(users)]
	}
	var out []Mutant
	for i, e := range rec.Audit {
		what := fmt.Sprintf("audit entry %d (%s %s %s by %s)", i, e.Verb, e.Resource, e.Name, e.User)
		out = append(out, Mutant{OpAudit, fmt.Sprintf("%s dropped", what),
			func(r *evidence.Record) { r.Audit = slices.Delete(r.Audit, i, i+1) }})
		user := otherUser(e.User)
		out = append(out, Mutant{OpAudit, fmt.Sprintf("%s user →%s", what, user),
			func(r *evidence.Record) { r.Audit[i].User = user }})
		verb := "delete"
		if e.Verb == "delete" {
			verb = "patch"
		}
		out = append(out, Mutant{OpAudit, fmt.Sprintf("%s verb →%s", what, verb),
			func(r *evidence.Record) { r.Audit[i].Verb = verb }})
		out = append(out, Mutant{OpAudit, fmt.Sprintf("%s %s later", what, moved),
			func(r *evidence.Record) {
				r.Audit[i].ReceivedAt = r.Audit[i].ReceivedAt.Add(moved)
				r.Audit[i].CompletedAt = r.Audit[i].CompletedAt.Add(moved)
			}})
	}
	return out, nil
}

// ledgerMutants break the ledger's writes where its story turns: the
// first and last of each run of one writer's writes, so the two around
// each change of writer (a ledger keeps long runs of like writes in
// between). Each such write is dropped, written twice, credited to another
// writer (the next one the ledger names; a writer it never saw when it
// names one), or moved 2 s later.
func ledgerMutants(rec *evidence.Record) []Mutant {
	var out []Mutant
	for l, read := range rec.Ledgers {
		type writer struct{ pod, uid, node string }
		writerOf := func(i int) writer {
			w := read.Entries[i].Write
			return writer{w.Pod, w.UID, w.Node}
		}
		var writers []writer
		var picked []int
		for i := range read.Entries {
			w := writerOf(i)
			if !slices.Contains(writers, w) {
				writers = append(writers, w)
			}
			first := i == 0 || writerOf(i-1) != w
			last := i == len(read.Entries)-1 || writerOf(i+1) != w
			if first || last {
				picked = append(picked, i)
			}
		}
		otherWriter := func(w writer) writer {
			if len(writers) < 2 {
				return writer{w.pod, "mutant-uid", w.node + "-mutant"}
			}
			return writers[(slices.Index(writers, w)+1)%len(writers)]
		}
		for _, i := range picked {
			e := read.Entries[i]
			what := fmt.Sprintf("ledger read %d write %d (%s on %s, seq %d)", l, i, e.Pod, e.Node, e.Seq)
			out = append(out, Mutant{OpLedger, fmt.Sprintf("%s dropped", what),
				func(r *evidence.Record) { r.Ledgers[l].Entries = slices.Delete(r.Ledgers[l].Entries, i, i+1) }})
			out = append(out, Mutant{OpLedger, fmt.Sprintf("%s duplicated", what),
				func(r *evidence.Record) {
					r.Ledgers[l].Entries = slices.Insert(r.Ledgers[l].Entries, i+1, r.Ledgers[l].Entries[i])
				}})
			to := otherWriter(writerOf(i))
			out = append(out, Mutant{OpLedger, fmt.Sprintf("%s writer →%s on %s", what, to.pod, to.node),
				func(r *evidence.Record) {
					w := &r.Ledgers[l].Entries[i].Write
					w.Pod, w.UID, w.Node = to.pod, to.uid, to.node
				}})
			out = append(out, Mutant{OpLedger, fmt.Sprintf("%s %s later", what, moved),
				func(r *evidence.Record) {
					e := &r.Ledgers[l].Entries[i]
					e.ReceivedAt, e.SentAt = e.ReceivedAt.Add(moved), e.SentAt.Add(moved)
				}})
		}
	}
	return out
}

// proxyMutants each drop one read of kube-proxy's rules, or make a read
// still show an endpoint the node's read before it forwarded to and this
// one no longer does (per Service port): the endpoint left the rules later
// than the record says.
func proxyMutants(rec *evidence.Record) []Mutant {
	var out []Mutant
	previous := map[string]int{} // node → index of its previous read
	for i, p := range rec.ProxyRules {
		out = append(out, Mutant{OpProxy, fmt.Sprintf("proxy read %d (%s) dropped", i, p.Node),
			func(r *evidence.Record) { r.ProxyRules = slices.Delete(r.ProxyRules, i, i+1) }})
		j, ok := previous[p.Node]
		previous[p.Node] = i
		if !ok || p.Error != "" || rec.ProxyRules[j].Error != "" {
			continue
		}
		before := rec.ProxyRules[j].Forwards
		for _, port := range sortedKeys(before) {
			var gone []string
			for _, ep := range before[port] {
				if !slices.Contains(p.Forwards[port], ep) {
					gone = append(gone, ep)
				}
			}
			if len(gone) == 0 {
				continue
			}
			out = append(out, Mutant{OpProxy, fmt.Sprintf("proxy read %d (%s) still forwards %s to the endpoints read %d did", i, p.Node, servicePortName(port), j),
				func(r *evidence.Record) {
					f := maps.Clone(r.ProxyRules[i].Forwards)
					if f == nil {
						f = map[string][]string{}
					}
					f[port] = append(slices.Clone(f[port]), gone...)
					r.ProxyRules[i].Forwards = f
				}})
		}
	}
	return out
}

// servicePortName drops the namespace (it holds the run id) from a
// "<namespace>/<service>:<port>" key, so names survive a re-recording.
func servicePortName(key string) string {
	_, after, ok := strings.Cut(key, "/")
	if !ok {
		return key
	}
	return after
}

// taskExitMutants change each containerd task exit's status to each of the
// other exitCodes, and move its time 2 s earlier and later.
func taskExitMutants(rec *evidence.Record) []Mutant {
	var out []Mutant
	for i, t := range rec.TaskExits {
		what := fmt.Sprintf("task exit %d (on %s, status %d)", i, t.Node, t.ExitStatus)
		for _, to := range exitCodes {
			if to == t.ExitStatus {
				continue
			}
			out = append(out, Mutant{OpTaskExit, fmt.Sprintf("%s status →%d", what, to),
				func(r *evidence.Record) { r.TaskExits[i].ExitStatus = to }})
		}
		for _, s := range []time.Duration{-moved, moved} {
			out = append(out, Mutant{OpTaskExit, fmt.Sprintf("%s exited %s", what, signed(s)),
				func(r *evidence.Record) { r.TaskExits[i].ExitedAt = r.TaskExits[i].ExitedAt.Add(s) }})
		}
	}
	return out
}

// clockMutants move each measured clock offset by 2 s, or drop it: the
// node's clock was off, or its probe never answered.
func clockMutants(rec *evidence.Record) []Mutant {
	var out []Mutant
	for i, c := range rec.Clocks {
		out = append(out, Mutant{OpClock, fmt.Sprintf("clock %s offset %s", c.Clock, signed(moved)),
			func(r *evidence.Record) { r.Clocks[i].Offset += moved.Seconds() }})
		out = append(out, Mutant{OpClock, fmt.Sprintf("clock %s dropped", c.Clock),
			func(r *evidence.Record) { r.Clocks = slices.Delete(r.Clocks, i, i+1) }})
	}
	return out
}

// signed writes a shift with its sign: "+2s", "-2s".
func signed(d time.Duration) string {
	if d < 0 {
		return d.String()
	}
	return "+" + d.String()
}
