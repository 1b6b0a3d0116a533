package graceful

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
	"github.com/termlab/termlab/internal/workloadlog"
)

// recorded is a real lab:graceful run on the termlab cluster (kubelet and
// kube-proxy v1.37.2, iptables mode); the whole pod objects are left out of
// events.jsonl.
const recorded = "testdata/20261204-031643-7322"

func load(t *testing.T) *evidence.Record { return labtest.Load(t, recorded) }

func TestRecordedRunPasses(t *testing.T) {
	rec := load(t)
	labtest.AllPass(t, Claims(rec), 9)
	fs := factsOf(rec)
	if n := len(byName(fs, "exit-now").Failed()); n == 0 {
		t.Errorf("the recorded run has no failed exit-now request")
	}
	for _, f := range fs {
		if f.v.Name != "exit-now" && len(f.Failed()) != 0 {
			t.Errorf("%s: %d failed requests in the recorded run", f.v.Name, len(f.Failed()))
		}
	}
}

// mutate changes the facts' sources in the record.
func victimFacts(t *testing.T, rec *evidence.Record, name string) facts {
	t.Helper()
	f := byName(factsOf(rec), name)
	if f.Deleted.IsZero() {
		t.Fatalf("%s: no delete in the recorded run", name)
	}
	return f
}

func TestContradictingRecordsFail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*testing.T, *evidence.Record)
		fails  []string
	}{
		{"the workload exits before its exec preStop ends", func(t *testing.T, rec *evidence.Record) {
			f := victimFacts(t, rec, "exec-sleep")
			early := f.Log.PreStopStartAt.Add(time.Second)
			for i := range rec.TaskExits {
				if rec.TaskExits[i].ContainerID == f.ContainerID {
					rec.TaskExits[i].ExitedAt = early
				}
			}
			for i := range rec.Containers {
				if rec.Containers[i].Pod == "exec-sleep" && rec.Containers[i].FinishedAt != nil {
					rec.Containers[i].FinishedAt = &early
				}
			}
		}, []string{idSigtermAfterPreStop}},
		{"the native preStop's process is gone before its sleep ends", func(t *testing.T, rec *evidence.Record) {
			f := victimFacts(t, rec, "native-sleep")
			early := f.Deleted.Add(2 * time.Second)
			for i := range rec.TaskExits {
				if rec.TaskExits[i].ContainerID == f.ContainerID {
					rec.TaskExits[i].ExitedAt = early
				}
			}
			for i := range rec.Containers {
				if rec.Containers[i].Pod == "native-sleep" && rec.Containers[i].FinishedAt != nil {
					rec.Containers[i].FinishedAt = &early
				}
			}
		}, []string{idSigtermAfterPreStop}},
		{"exit-now and exec-sleep were killed at their SIGTERM instead of ending themselves", func(t *testing.T, rec *evidence.Record) {
			for _, name := range []string{"exit-now", "exec-sleep"} {
				f := victimFacts(t, rec, name)
				for i := range rec.TaskExits {
					if rec.TaskExits[i].ContainerID == f.ContainerID {
						rec.TaskExits[i].ExitStatus = 137
					}
				}
				for i := range rec.Containers {
					if rec.Containers[i].Pod == name && rec.Containers[i].ExitCode != nil {
						killed := int32(137)
						rec.Containers[i].ExitCode = &killed
					}
				}
			}
		}, []string{idNoPreStopFails, idSigtermAfterPreStop}},
		{"the client's node keeps a stale endpoint", func(t *testing.T, rec *evidence.Record) {
			f := victimFacts(t, rec, "native-sleep")
			svc := servicePort(rec.Namespace, "native-sleep")
			for i, p := range rec.ProxyRules {
				if p.FinishedAt.After(f.Deleted) && !p.ForwardsTo(svc, f.Endpoint) {
					addForward(&rec.ProxyRules[i], svc, f.Endpoint)
				}
			}
		}, []string{idClientNodeDrops, idPreStopNoFailures}},
		{"the client's node drops the endpoint only after the preStop sleep", func(t *testing.T, rec *evidence.Record) {
			f := victimFacts(t, rec, "exec-sleep")
			svc := servicePort(rec.Namespace, "exec-sleep")
			for i, p := range rec.ProxyRules {
				if p.FinishedAt.After(f.Deleted) && p.StartedAt.Before(f.Deleted.Add(preStopSleep+time.Second)) && !p.ForwardsTo(svc, f.Endpoint) {
					addForward(&rec.ProxyRules[i], svc, f.Endpoint)
				}
			}
		}, []string{idClientNodeDrops, idPreStopNoFailures}},
		{"no exit-now request failed", func(t *testing.T, rec *evidence.Record) {
			for i, q := range rec.Requests {
				if q.Target == "exit-now" && q.Failed() {
					rec.Requests[i].Outcome, rec.Requests[i].Backend = workloadlog.OutcomeOK, "exit-now"
				}
			}
		}, []string{idNoPreStopFails}},
		{"an exec-sleep request failed after the node had dropped the pod", func(t *testing.T, rec *evidence.Record) {
			f := victimFacts(t, rec, "exec-sleep")
			_, dropped, _ := f.DroppedBetween()
			for i, q := range rec.Requests {
				if q.Target == "exec-sleep" && q.Start.After(dropped.Add(time.Second)) {
					rec.Requests[i].Outcome, rec.Requests[i].Backend = workloadlog.OutcomeTimeout, ""
					break
				}
			}
		}, []string{idPreStopNoFailures, idFailuresAttributed}},
		{"a request failed before any delete", func(t *testing.T, rec *evidence.Record) {
			for i, q := range rec.Requests {
				if q.Target == "ignore-term" {
					rec.Requests[i].Outcome = workloadlog.OutcomeReset
					break
				}
			}
		}, []string{idFailuresAttributed}},
		{"the terminating endpoint was no longer serving while the process served", func(t *testing.T, rec *evidence.Record) {
			no := false
			for i, e := range rec.EndpointSlices {
				for j, ep := range e.Endpoints {
					if ep.Pod == "ignore-term" && isTrue(ep.Terminating) {
						rec.EndpointSlices[i].Endpoints[j].Serving = &no
					}
				}
			}
		}, []string{idEndpointTerminating}},
		{"the EndpointSlice never marked the pod terminating", func(t *testing.T, rec *evidence.Record) {
			var kept []evidence.EndpointSliceEvent
			for _, e := range rec.EndpointSlices {
				if ep, ok := e.Endpoint("exec-sleep"); ok && isTrue(ep.Terminating) {
					continue
				}
				kept = append(kept, e)
			}
			rec.EndpointSlices = kept
		}, []string{idEndpointTerminating}},
		{"the kubelet waited for the whole overrunning preStop before SIGTERM", func(t *testing.T, rec *evidence.Record) {
			f := victimFacts(t, rec, "prestop-overrun")
			late := f.Log.PreStopStartAt.Add(overrunSleep) // the hook's whole sleep
			for i := range rec.Containers {
				if rec.Containers[i].Pod == "prestop-overrun" && rec.Containers[i].Log != nil {
					rec.Containers[i].Log.SignalAt = &late
				}
			}
			// …and so the recorded exit is no longer 2 s after the SIGTERM.
		}, []string{idPreStopCountsGrace, idSigkillAtGraceEnd}},
		{"the overrunning preStop started later than the kubelet's sync after the delete", func(t *testing.T, rec *evidence.Record) {
			f := victimFacts(t, rec, "prestop-overrun")
			late := f.Deleted.Add(claims.KubeletSyncAllowance + 500*time.Millisecond)
			for i := range rec.Containers {
				if rec.Containers[i].Pod == "prestop-overrun" && rec.Containers[i].Log != nil {
					rec.Containers[i].Log.PreStopStartAt = &late
				}
			}
		}, []string{idPreStopCountsGrace}},
		{"SIGKILL came with a fresh grace period after the overrunning preStop", func(t *testing.T, rec *evidence.Record) {
			f := victimFacts(t, rec, "prestop-overrun")
			sig, _ := f.SignalAt()
			late := sig.Add(overrunGrace) // a fresh grace period instead of the 2 s minimum
			for i := range rec.TaskExits {
				if rec.TaskExits[i].ContainerID == f.ContainerID {
					rec.TaskExits[i].ExitedAt = late
				}
			}
			for i := range rec.Containers {
				if rec.Containers[i].Pod == "prestop-overrun" && rec.Containers[i].FinishedAt != nil {
					rec.Containers[i].FinishedAt = &late
				}
			}
		}, []string{idSigkillAtGraceEnd}},
		{"the process that ignores SIGTERM exited 0", func(t *testing.T, rec *evidence.Record) {
			zero := int32(0)
			f := victimFacts(t, rec, "ignore-term")
			for i := range rec.TaskExits {
				if rec.TaskExits[i].ContainerID == f.ContainerID {
					rec.TaskExits[i].ExitStatus = 0
				}
			}
			for i := range rec.Containers {
				if rec.Containers[i].Pod == "ignore-term" && rec.Containers[i].ExitCode != nil {
					rec.Containers[i].ExitCode = &zero
				}
			}
		}, []string{idSigkillAtGraceEnd}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := load(t)
			tc.mutate(t, rec)
			got := Claims(rec)
			labtest.MustFail(t, got, tc.fails...)
			for _, c := range got {
				if !c.Passed() && !slices.Contains(tc.fails, c.ID) {
					t.Errorf("%s failed too: %s", c.ID, c.Reason)
				}
			}
		})
	}
}

func TestAnswerIsTheTable(t *testing.T) {
	rec := load(t)
	got := Answer(rec, Claims(rec))
	for _, want := range []string{"| variant | failed requests | why |", "`exit-now`", windowUnreachable, "`prestop-overrun`"} {
		if !strings.Contains(got, want) {
			t.Errorf("the answer lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Not as claimed") {
		t.Errorf("the answer of a passing run names failed claims:\n%s", got)
	}
	// The answer opens with the table's finding in plain words, from this run.
	first, _, _ := strings.Cut(got, "\n")
	fs := factsOf(rec)
	count := func(name string) string {
		x := byName(fs, name)
		return fmt.Sprintf("%d of %d", len(x.Failed()), len(x.Requests))
	}
	for _, want := range []string{"With no preStop (`exit-now`), " + count("exit-now") + " requests failed", "With a 10 s preStop sleep, none: " + count("exec-sleep") + " (`exec-sleep`) and " + count("native-sleep") + " (`native-sleep`)."} {
		if !strings.Contains(first, want) {
			t.Errorf("the answer's first line lacks %q:\n%s", want, first)
		}
	}
	// A run whose preStop sleeps lost requests must not say they lost none.
	decided := Claims(rec)
	for i := range decided {
		if decided[i].ID == idPreStopNoFailures {
			decided[i].Verdict, decided[i].Reason = claims.Fail, "exec-sleep: 3 request(s) failed"
		}
	}
	if bad := Answer(rec, decided); strings.Contains(bad, "preStop sleep, none") || !strings.Contains(bad, idPreStopNoFailures+" failed") {
		t.Errorf("with %s failed the answer still says the sleeps lost none:\n%s", idPreStopNoFailures, bad)
	}
	if len(Report(rec, nil)) != 1 {
		t.Errorf("want one report section")
	}
}

func addForward(p *evidence.ProxyRulesRead, svc, endpoint string) {
	if p.Forwards == nil {
		p.Forwards = map[string][]string{}
	}
	p.Forwards[svc] = append(p.Forwards[svc], endpoint)
}

// A read that lists none of a Service's rules (a cut output that still
// parsed) says nothing of when the node dropped the pod: it must not move
// the drop earlier and turn the deletion's failures into unexplained ones.
func TestReadWithoutTheServiceSaysNothing(t *testing.T) {
	rec := load(t)
	f := victimFacts(t, rec, "exit-now")
	from, to, ok := f.DroppedBetween()
	if !ok || f.LastForwarding == nil {
		t.Fatalf("exit-now: the recorded run has no read forwarding after the delete")
	}
	cut := *f.LastForwarding
	cut.StartedAt, cut.FinishedAt = f.LastForwarding.StartedAt.Add(time.Millisecond), f.LastForwarding.FinishedAt.Add(time.Millisecond)
	cut.Forwards = map[string][]string{}
	for svc, eps := range f.LastForwarding.Forwards {
		if svc != servicePort(rec.Namespace, "exit-now") {
			cut.Forwards[svc] = eps
		}
	}
	at := slices.IndexFunc(rec.ProxyRules, func(p evidence.ProxyRulesRead) bool { return p.StartedAt.Equal(f.LastForwarding.StartedAt) })
	rec.ProxyRules = slices.Insert(rec.ProxyRules, at+1, cut)

	g := victimFacts(t, rec, "exit-now")
	if gf, gt, _ := g.DroppedBetween(); !gt.Equal(to) || gf.Before(from) {
		t.Errorf("the cut read moved the drop: was %s–%s, now %s–%s", from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano), gf.Format(time.RFC3339Nano), gt.Format(time.RFC3339Nano))
	}
	labtest.AllPass(t, Claims(rec), 9)
}

// A pod's watch events in an order a watch never sends fail graceful.watch_order.
func TestWatchOrderBroken(t *testing.T) {
	labtest.BreaksWatchOrder(t, load, Claims, "graceful")
}

// A connection to the deleted pod that was never answered leaves a SYN_SENT
// conntrack entry on the client's node; a later connection given its source
// port goes to the pod again, after the rules dropped it (kubernetes#101607).
// Such a timeout is the deletion's, but only after an unanswered connection
// freed a port: without one, a timeout after the drop stays unexplained.
func TestStaleConntrackAfterTheDrop(t *testing.T) {
	// plant makes an exit-now request after the drop time out, and one
	// between the stop and the drop time out unanswered before it (when
	// unanswered), giving them the ports asked for (0: none logged).
	plant := func(t *testing.T, rec *evidence.Record, unanswered bool, oldPort, newPort int) evidence.Request {
		t.Helper()
		f := victimFacts(t, rec, "exit-now")
		stopped, _ := f.StoppedAccepting()
		_, dropped, _ := f.DroppedBetween()
		freed := dropped
		for i, q := range rec.Requests {
			if q.Target != "exit-now" || !q.Start.Before(dropped) {
				continue
			}
			switch {
			case q.Outcome == workloadlog.OutcomeTimeout && !unanswered:
				rec.Requests[i].Outcome = workloadlog.OutcomeReset
			case unanswered && freed.Equal(dropped) && q.Failed() && q.Start.After(stopped):
				rec.Requests[i].Outcome, rec.Requests[i].End = workloadlog.OutcomeTimeout, q.Start.Add(time.Second)
				rec.Requests[i].SourcePort = oldPort
				freed = rec.Requests[i].End
			}
		}
		if unanswered && freed.Equal(dropped) {
			t.Fatal("the recorded run has no failed exit-now request between its stop and the drop")
		}
		for i, q := range rec.Requests {
			if q.Target == "exit-now" && q.Start.After(freed) && q.Start.After(dropped) {
				rec.Requests[i].Outcome, rec.Requests[i].Backend, rec.Requests[i].End = workloadlog.OutcomeTimeout, "", q.Start.Add(5*time.Second)
				rec.Requests[i].SourcePort = newPort
				return rec.Requests[i]
			}
		}
		t.Fatal("the recorded run has no exit-now request after the drop")
		return evidence.Request{}
	}

	for _, tc := range []struct {
		name             string
		unanswered       bool
		oldPort, newPort int
		want             string
	}{
		{"same port as an unanswered connection", true, 40001, 40001, windowStaleConntrack},
		{"no ports logged, an unanswered connection ended before", true, 0, 0, windowStaleConntrackInferred},
		{"another port than the unanswered connection's", true, 40001, 40002, windowAfter},
		{"a port logged, the unanswered connection's not", true, 0, 40001, windowAfter},
		{"no unanswered connection before it", false, 0, 0, windowAfter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := load(t)
			q := plant(t, rec, tc.unanswered, tc.oldPort, tc.newPort)
			if w := victimFacts(t, rec, "exit-now").Window(q); w != tc.want {
				t.Errorf("window %q, want %q", w, tc.want)
			}
			if explained(tc.want) {
				labtest.AllPass(t, Claims(rec), 9)
			} else {
				labtest.OnlyFail(t, Claims(rec), idNoPreStopFails, idFailuresAttributed)
			}
		})
	}
}
