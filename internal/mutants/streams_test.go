package mutants

import (
	"slices"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/ledger"
)

// streamsRecord holds one or two of each stream the stream operators break.
func streamsRecord() *evidence.Record {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	write := func(s float64, pod, node string, seq int) ledger.Entry {
		return ledger.Entry{ReceivedAt: at(s), Write: ledger.Write{Pod: pod, UID: pod + "-uid", Node: node, Seq: seq, SentAt: at(s)}}
	}
	return &evidence.Record{
		StartedAt: t0, EndedAt: at(60),
		Actions: []evidence.Action{
			{Kind: evidence.ActionCreate, Target: "p", StartedAt: at(1), FinishedAt: at(2)},
			{Kind: evidence.ActionDelete, Target: "p", StartedAt: at(10), FinishedAt: at(11)},
		},
		Audit: []evidence.AuditEvent{
			{Verb: "delete", Resource: "pods", Name: "p", User: "admin", ReceivedAt: at(10), CompletedAt: at(10.5)},
			{Verb: "patch", Resource: "pods", Name: "p", User: "kubelet", ReceivedAt: at(12), CompletedAt: at(12.1)},
		},
		Ledgers: []evidence.LedgerRead{{At: at(50), Entries: []ledger.Entry{
			write(20, "w", "a", 1), write(21, "w", "a", 2), write(22, "w", "a", 3), write(23, "w", "b", 1), write(24, "w", "b", 2),
		}}},
		ProxyRules: []evidence.ProxyRulesRead{
			{Node: "n", StartedAt: at(5), Forwards: map[string][]string{"ns/s:http": {"1.1.1.1:80", "2.2.2.2:80"}}},
			{Node: "n", StartedAt: at(15), Forwards: map[string][]string{"ns/s:http": {"1.1.1.1:80"}}},
		},
		TaskExits: []evidence.TaskExit{{Node: "n", ContainerID: "c", ExitStatus: 137, ExitedAt: at(30)}},
		Clocks:    []evidence.ClockOffset{{Clock: evidence.ClockNode("n"), Offset: 0.001}},
	}
}

// applied is the mutant of that name applied to a fresh copy of rec.
func applied(t *testing.T, ms []Mutant, rec *evidence.Record, name string) *evidence.Record {
	t.Helper()
	i := slices.IndexFunc(ms, func(m Mutant) bool { return m.Name == name })
	if i < 0 {
		var names []string
		for _, m := range ms {
			names = append(names, m.Name)
		}
		t.Fatalf("no mutant %q among %q", name, names)
	}
	out := clone(rec)
	ms[i].apply(out)
	return out
}

func TestStreamMutantsBreakWhatTheySay(t *testing.T) {
	rec := streamsRecord()
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

	actions := actionMutants(rec)
	if got := applied(t, actions, rec, "action 1 (delete p) dropped").Actions; len(got) != 1 || got[0].Kind != evidence.ActionCreate {
		t.Errorf("dropping action 1 left %+v", got)
	}
	// Action 1 ends at 11 s, the run at 60 s: 49 s to what follows.
	if got := applied(t, actions, rec, "action 1 (delete p) earlier: its distance to what follows ×2").Actions[1]; got.FinishedAt.Sub(rec.StartedAt) != sec(11-49) {
		t.Errorf("stretched action 1 ends at %v", got.FinishedAt.Sub(rec.StartedAt))
	}
	if got := applied(t, actions, rec, "action 1 (delete p) 2s later").Actions[1]; got.StartedAt.Sub(rec.StartedAt) != sec(12) || got.FinishedAt.Sub(rec.StartedAt) != sec(13) {
		t.Errorf("action 1 moved 2 s later runs %v … %v", got.StartedAt.Sub(rec.StartedAt), got.FinishedAt.Sub(rec.StartedAt))
	}
	if got := applied(t, actions, rec, "action 0 (create p) later: its distance to what follows ×0.5").Actions[0]; got.StartedAt.Sub(rec.StartedAt) != sec(5) {
		t.Errorf("shrunk action 0 starts at %v, want 5 s (8 s to the next action, halved)", got.StartedAt.Sub(rec.StartedAt))
	}

	audit, notes := auditMutants(rec)
	if len(notes) > 0 {
		t.Errorf("notes on an audit log in memory: %q", notes)
	}
	if got := applied(t, audit, rec, "audit entry 0 (delete pods p by admin) user →kubelet").Audit[0].User; got != "kubelet" {
		t.Errorf("user changed to %q", got)
	}
	if got := applied(t, audit, rec, "audit entry 0 (delete pods p by admin) verb →patch").Audit[0].Verb; got != "patch" {
		t.Errorf("verb changed to %q", got)
	}
	if got := applied(t, audit, rec, "audit entry 1 (patch pods p by kubelet) verb →delete").Audit[1].Verb; got != "delete" {
		t.Errorf("verb changed to %q", got)
	}
	if got := applied(t, audit, rec, "audit entry 1 (patch pods p by kubelet) 2s later").Audit[1]; got.ReceivedAt.Sub(rec.StartedAt) != sec(14) || got.CompletedAt.Sub(rec.StartedAt) != sec(14.1) {
		t.Errorf("moved audit entry: %v, %v", got.ReceivedAt, got.CompletedAt)
	}

	ledgers := ledgerMutants(rec)
	for _, m := range ledgers {
		if m.Name == "ledger read 0 write 1 (w on a, seq 2) dropped" {
			t.Error("a write in the middle of one writer's run was mutated: only where the story turns")
		}
	}
	if got := applied(t, ledgers, rec, "ledger read 0 write 2 (w on a, seq 3) writer →w on b").Ledgers[0].Entries[2]; got.Node != "b" || got.UID != "w-uid" {
		t.Errorf("writer changed to %+v", got.Write)
	}
	if got := applied(t, ledgers, rec, "ledger read 0 write 3 (w on b, seq 1) duplicated").Ledgers[0].Entries; len(got) != 6 || got[3] != got[4] {
		t.Errorf("duplicated write: %+v", got)
	}

	proxy := proxyMutants(rec)
	if got := applied(t, proxy, rec, "proxy read 1 (n) still forwards s:http to the endpoints read 0 did").ProxyRules[1]; !got.ForwardsTo("ns/s:http", "2.2.2.2:80") {
		t.Errorf("the gone endpoint is not back: %v", got.Forwards)
	}
	if rec.ProxyRules[1].ForwardsTo("ns/s:http", "2.2.2.2:80") {
		t.Error("the proxy mutant wrote into the reference's map")
	}

	exits := taskExitMutants(rec)
	if got := applied(t, exits, rec, "task exit 0 (on n, status 137) status →143").TaskExits[0].ExitStatus; got != 143 {
		t.Errorf("status changed to %d", got)
	}
	if got := applied(t, exits, rec, "task exit 0 (on n, status 137) exited -2s").TaskExits[0].ExitedAt.Sub(rec.StartedAt); got != sec(28) {
		t.Errorf("exit moved to %v", got)
	}

	clocks := clockMutants(rec)
	if got := applied(t, clocks, rec, "clock node/n offset +2s").Clocks[0].Offset; got != 2.001 {
		t.Errorf("offset moved to %v", got)
	}
	if got := applied(t, clocks, rec, "clock node/n dropped").Clocks; len(got) != 0 {
		t.Errorf("clock not dropped: %+v", got)
	}
}

// A record whose audit events stay on disk is not mutated there, and says so.
func TestAuditOnDiskIsNotMutated(t *testing.T) {
	rec := streamsRecord()
	rec.AuditOnDisk("audit.jsonl", 2)
	ms, notes := auditMutants(rec)
	if len(ms) != 0 || len(notes) != 1 {
		t.Errorf("audit on disk: %d mutants, notes %q", len(ms), notes)
	}
}
