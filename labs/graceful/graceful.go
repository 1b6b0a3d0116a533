// Package graceful is lab:graceful — a normal deletion of a pod behind a
// Service, and the requests that fail while it goes.
//
// Each variant is a Service with two pods on the first real worker: the
// variant's own pod, which the lab deletes, and one "steady" pod that every
// Service shares and nobody deletes, so a request the client's node no
// longer sends to the deleted pod still has somewhere to go. A client pod on
// the second worker sends a GET to every Service's ClusterIP every 50 ms
// (exit-now's every 10 ms), each on a new connection (so each is routed by
// the client node's kube-proxy rules at that moment), and logs each
// request's start, end and outcome.
//
// The lab deletes the variants' pods one after the other (an ordinary
// delete: each pod's own grace period), exit-now last, right after the
// others, as the next pod of a rollout goes, and records on one timeline
// per variant: the delete, the EndpointSlice's endpoint conditions (a
// watch), the client node's kube-proxy rules (iptables-save, read through
// the node's exec seam every readEvery), the workload's own SIGTERM and
// preStop lines, the container's exit (crictl, or containerd's exit event
// when the kubelet removed the container first) and every request.
package graceful

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/workloadlog"
)

// The objects.
const (
	serverManifest = "graceful-server.yaml"
	clientManifest = "graceful-client.yaml"
	steady         = "steady"
	client         = "client"
	port           = 8080
	portName       = "http"
	// backendLabel + variant name selects a variant's Service's pods.
	backendLabel = "termlab.dev/backend-of-"
)

// How a variant's pod may run a preStop hook.
type preStopKind string

const (
	noPreStop     preStopKind = ""
	execPreStop   preStopKind = "exec"  // exec: heartbeat sleep N (the image has no shell)
	nativePreStop preStopKind = "sleep" // the native sleep action: no process at all
)

// variant is one deletion the lab makes: a Service and the pod it deletes.
type variant struct {
	Name    string // the Service's and the pod's name
	Title   string
	OnTerm  string // workloadlog.OnTerm*
	PreStop preStopKind
	// Sleep is the preStop's sleep; Grace the pod's terminationGracePeriodSeconds.
	Sleep, Grace time.Duration
}

// preStopSleep is the preStop sleep of the variants meant to lose nothing:
// longer than the propagation to the client's node (the lab's runs measured
// 0.5–2.7 s, and once 4.4–6.9 s under a load average of 12; the claim checks
// the margin on every run), shorter than their grace.
const preStopSleep = 10 * time.Second

// Grace periods, each chosen for what the variant shows.
const (
	// exitGrace: the variants that exit on SIGTERM never come near it; it
	// only has to exceed the preStop sleep so the sleep ends before it.
	exitGrace = 15 * time.Second
	// ignoreGrace: SIGKILL comes at its end; short, to keep the run short,
	// and longer than the 2 s minimum so the two are told apart.
	ignoreGrace = 5 * time.Second
	// overrunGrace and overrunSleep: a preStop four times longer than the
	// grace period, so the kubelet's cut (grace + 2 s) is far from its end.
	overrunGrace = 4 * time.Second
	overrunSleep = 16 * time.Second
)

// The variants, in the order of the report's table.
var variants = []variant{
	{Name: "exit-now", Title: "no preStop; exits at once on SIGTERM", OnTerm: workloadlog.OnTermExit, Grace: exitGrace},
	{Name: "exec-sleep", Title: fmt.Sprintf("preStop exec `heartbeat sleep %s`; exits at once on SIGTERM", preStopSleep), OnTerm: workloadlog.OnTermExit, PreStop: execPreStop, Sleep: preStopSleep, Grace: exitGrace},
	{Name: "native-sleep", Title: fmt.Sprintf("native preStop `sleep: {seconds: %d}`; drains on SIGTERM", int(preStopSleep/time.Second)), OnTerm: workloadlog.OnTermDrain, PreStop: nativePreStop, Sleep: preStopSleep, Grace: exitGrace},
	{Name: "ignore-term", Title: fmt.Sprintf("no preStop; ignores SIGTERM (grace %s)", claims.InSeconds(ignoreGrace)), OnTerm: workloadlog.OnTermIgnore, Grace: ignoreGrace},
	{Name: "prestop-overrun", Title: fmt.Sprintf("preStop exec sleep %s > grace %s; ignores SIGTERM", claims.InSeconds(overrunSleep), claims.InSeconds(overrunGrace)), OnTerm: workloadlog.OnTermIgnore, PreStop: execPreStop, Sleep: overrunSleep, Grace: overrunGrace},
}

// answerAfter is how long the servers take for each request
// (manifests/pods/graceful-server.yaml): a handler's work, so that a
// process that exits at once on SIGTERM has requests in flight to drop,
// whoever wins the race between the kubelet's SIGTERM and the client
// node's rule update.
const answerAfter = 200 * time.Millisecond

// exitNowAnswerAfter is exit-now's: longer than the client's node can be
// ahead of the kubelet, so requests are in flight at its SIGTERM even when
// the rule change comes first. The kubelet's SIGTERM came up to 2.2 s after
// a delete on this machine (bounds.go), the rule change no sooner than
// 0.3 s; with 200 ms a script's run saw the rules change 0.4 s before the
// SIGTERM and no request fail (2026-12-04). Under the client's 5 s timeout (manifests/pods/graceful-client.yaml).
const exitNowAnswerAfter = 2 * time.Second

// answerAfter is how long the variant's server takes for each request.
func (v variant) answerAfter() time.Duration {
	if v.Name == "exit-now" {
		return exitNowAnswerAfter
	}
	return answerAfter
}

// The client's schedule (manifests/pods/graceful-client.yaml: the timeout).
const (
	// requestEvery is each Service's period; exitNowEvery exit-now's, five
	// times faster: its window (from the SIGTERM to the client node's rule
	// change) lasts a few hundred milliseconds, and half of the requests go
	// to the steady pod.
	requestEvery = 50 * time.Millisecond
	exitNowEvery = 10 * time.Millisecond
)

// every is the client's period for the variant's Service.
func (v variant) every() time.Duration {
	if v.Name == "exit-now" {
		return exitNowEvery
	}
	return requestEvery
}

// Bounds of the lab's waits and holds.
const (
	readyWithin = 90 * time.Second
	// rulesReadyWithin: the client node forwards to every new pod once the
	// EndpointSlice has it and kube-proxy synced (proxyRulesWithin), twice.
	rulesReadyWithin = 2 * proxyRulesWithin
	// baseline: requests before the first delete, so a failure the delete
	// did not cause shows.
	baseline = 3 * time.Second
	// readEvery is the pause between two reads of the client node's rules;
	// a read itself takes about 0.15 s, so the rules are seen about every
	// quarter second: the resolution of "when the node stopped forwarding".
	readEvery = 100 * time.Millisecond
	// stopProbeEvery: while the lab waits for the containers to stop it
	// looks at containerd's exit events (in the record) this often, and
	// lists the containers with crictl every psEvery looks: a look at crictl
	// as soon as an exit shows, before the kubelet removes the container
	// about a second later.
	stopProbeEvery = 100 * time.Millisecond
	psEvery        = 10
	// taskEventsFor bounds how long containerd's events are followed: the
	// rest of the run, with room.
	taskEventsFor = 3 * time.Minute
	// lastDeleted is deleted right after the others (see the delete step).
	lastDeleted = "exit-now"
	// servingWithin: a started server logs its serving line at once; the
	// bound is for a look through crictl on a loaded node.
	servingWithin     = 15 * time.Second
	servingProbeEvery = 500 * time.Millisecond
	// after: requests after the last exit and the last rule change, so the
	// steady pod's answers show the Service kept working.
	after = 2 * time.Second
)

// Bounds of the claims, each from the mechanism (internal/claims/bounds.go).
const (
	// endpointSliceWithin: the EndpointSlice controller syncs the Service in
	// the pass the pod's update triggers (its batch period is 0 by default)
	// and its write comes back on the watch.
	endpointSliceWithin = claims.ControllerSyncAllowance + claims.WatchAllowance // 3 s
	// kubeProxyMinSyncPeriod is kind's kube-proxy config (iptables
	// minSyncPeriod 1s): a change waits at most that long after the last sync.
	kubeProxyMinSyncPeriod = time.Second
	// kubeProxySyncAllowance bounds kube-proxy's reaction and one
	// iptables-restore on a loaded node: the client's node once kept a pod
	// 4.4–6.9 s after the EndpointSlice said terminating (at +0.06 s) under a
	// load average of 12.
	kubeProxySyncAllowance = 3 * time.Second
	// rulesReadAllowance: a change is seen by the end of the next read,
	// readEvery plus one read: 0.15 s on an idle machine, up to 2.5 s under load.
	rulesReadAllowance = 3 * time.Second
	// proxyRulesWithin is the whole path to the client's node: 10 s.
	proxyRulesWithin = endpointSliceWithin + kubeProxyMinSyncPeriod + kubeProxySyncAllowance + rulesReadAllowance
	// hookReturnWithin: once an exec preStop returns, the kubelet asks the
	// runtime to stop the container at once: the part of the kubelet's path
	// (KubeletSyncAllowance) from its decision to the runtime's SIGTERM.
	// Observed 1.2 s under load (the exec session's end, then StopContainer).
	hookReturnWithin = claims.KubeletSyncAllowance
	// killAllowance: from the runtime's SIGKILL to the exit it records, and
	// a SIGTERM logged early relative to it, on a loaded node (seen 0.65 s
	// under a load average of 12); half the step from the kubelet's 2 s
	// minimum to a fresh 4 s grace period, so the two stay apart.
	killAllowance = time.Second
	// maxRequestGap: the client is taken to have kept sending when no two
	// request starts of a Service are further apart than this (20 periods;
	// a start waits only for the client's own scheduling).
	maxRequestGap = 20 * requestEvery
)

// Definition is the lab.
var Definition = lab.Definition{
	Name:      "graceful",
	Question:  "A pod behind a Service is deleted the normal way while a client sends it requests. Which requests fail, in which window — and what do a preStop sleep, ignoring SIGTERM and a preStop longer than the grace period change?",
	Summary:   "with no preStop the requests between SIGTERM and the client node's rule update fail; a preStop sleep longer than that propagation loses none; SIGKILL at grace end, +2 s when preStop overran",
	Predict:   "Five pods behind five Services are deleted while a client sends 20 requests a second to each (100 to the first), each answered after 200 ms. How many requests fail when the program exits at once on SIGTERM? With a 10 s preStop sleep (exec or native)? When it ignores SIGTERM? When its preStop is longer than the grace period, when does SIGKILL come?",
	Uses:      lab.Uses{Worker: 0, EndpointSlices: true, NeedsNodeAccess: true},
	Manifests: []string{serverManifest, clientManifest},
	ByHand: []lab.HandStep{
		{Title: "five Services, each with its variant's pod and the shared steady pod, on the first worker",
			Do:  []string{"kubectl create -n {ns} -f inputs/objects/  # from the run folder: the Services", "kubectl create -n {ns} -f inputs/pods/  # the pods exactly as sent: steady, the five variants and the client"},
			See: []string{"kubectl get endpointslices -n {ns} -o wide"}},
		{Title: "the client on the second worker: a GET to each Service every 50 ms (exit-now's every 10 ms), each logged",
			See: []string{"kubectl logs -n {ns} client --tail=5", "docker exec <client's node> iptables-save -t nat | grep {ns}/"}},
		{Title: "delete the five variants' pods (an ordinary delete)",
			Do:  []string{"kubectl delete pod -n {ns} exit-now exec-sleep native-sleep ignore-term prestop-overrun --wait=false"},
			See: []string{"kubectl get endpointslices -n {ns} -o yaml -w  # ready / serving / terminating", "docker exec <client's node> iptables-save -t nat | grep {ns}/", "kubectl logs -n {ns} client | grep -v outcome=ok"}},
	},
	Steps:  steps,
	Claims: Claims,
	Report: Report,
	Answer: Answer,
}

// servicePort is how kube-proxy's rules name a variant's Service port.
func servicePort(ns, name string) string { return ns + "/" + name + ":" + portName }

func steps(ctx context.Context, r *lab.Run) error {
	servers, err := r.Worker(0)
	if err != nil {
		return err
	}
	clientNode, err := r.Worker(1)
	if err != nil {
		return fmt.Errorf("the client runs on a second real worker: %w", err)
	}
	ips := map[string]string{}
	err = r.Step(ctx, fmt.Sprintf("create %d Services and their pods on %s, and wait until they are Ready", len(variants), servers), func(ctx context.Context) error {
		for _, v := range variants {
			svc := service(v.Name)
			if err := r.CreateObject(ctx, svc); err != nil {
				return err
			}
			ips[v.Name] = svc.Spec.ClusterIP
		}
		if _, err := r.CreatePodEdited(ctx, serverManifest, lab.Placement{Node: servers.String()}, steadyPod); err != nil {
			return err
		}
		for _, v := range variants {
			if _, err := r.CreatePodEdited(ctx, serverManifest, lab.Placement{Node: servers.String()}, v.pod); err != nil {
				return err
			}
		}
		for _, name := range append([]string{steady}, names()...) {
			e, err := r.WaitRunning(ctx, name, readyWithin)
			if err != nil {
				return err
			}
			if err := waitServing(ctx, r, servers, e); err != nil {
				return err
			}
		}
		// containerd's exit events keep each exit's time and status even when
		// the kubelet removes the container before crictl looks.
		return r.Unobserved(ctx, r.Rec.FollowTaskExits(servers, taskEventsFor))
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, fmt.Sprintf("wait until kube-proxy on %s forwards each Service to its two pods", clientNode), func(ctx context.Context) error {
		wctx, cancel := lab.Within(ctx, rulesReadyWithin)
		defer cancel()
		for {
			read, err := r.Rec.ReadProxyRules(wctx, clientNode)
			if err := r.Unobserved(ctx, err); err != nil {
				return err
			}
			if err == nil && allForwarding(read, r.Namespace) {
				r.Infof("iptables on %s: every Service forwards to 2 endpoints", clientNode)
				return nil
			}
			if !sleep(wctx, readEvery) {
				return r.Unobserved(ctx, fmt.Errorf("waiting for kube-proxy on %s to forward to every pod: %w", clientNode, context.DeadlineExceeded))
			}
		}
	})
	if err != nil {
		return err
	}

	var clientID string
	err = r.Step(ctx, fmt.Sprintf("start the client on %s and let it send for %s", clientNode, baseline), func(ctx context.Context) error {
		edit := func(p *corev1.Pod) error {
			for _, v := range variants {
				p.Spec.Containers[0].Args = append(p.Spec.Containers[0].Args, fmt.Sprintf("%s@%s=http://%s:%d/", v.Name, v.every(), ips[v.Name], port))
			}
			return nil
		}
		if _, err := r.CreatePodEdited(ctx, clientManifest, lab.Placement{Node: clientNode.String()}, edit); err != nil {
			return err
		}
		e, err := r.WaitRunning(ctx, client, readyWithin)
		if err != nil {
			return err
		}
		c, _ := e.Container("")
		clientID = c.ContainerID
		if !sleep(ctx, baseline) {
			return ctx.Err()
		}
		return nil
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, fmt.Sprintf("delete the %d variants' pods and record until every one exited and left %s's rules, and %s more", len(variants), clientNode, after), func(ctx context.Context) error {
		// The client node's rules are read from before the first delete to the end.
		rctx, stopReads := context.WithCancel(ctx)
		reads := make(chan struct{})
		go func() {
			defer close(reads)
			for {
				if _, err := r.Rec.ReadProxyRules(rctx, clientNode); err != nil && rctx.Err() == nil {
					r.Rec.Notef("a read of kube-proxy's rules on %s failed: %v", clientNode, err)
				}
				if !sleep(rctx, readEvery) {
					return
				}
			}
		}()
		defer func() { stopReads(); <-reads }()

		// exit-now goes last, within a second of the others, as the next pod
		// of a rollout does: kube-proxy has just synced their changes, and
		// waits its minSyncPeriod before it syncs exit-now's.
		containers := map[string]string{}
		for _, v := range deleteOrder() {
			e, ok := lastEvent(r.Rec.Record(), v.Name)
			if !ok {
				return fmt.Errorf("no watch event of pod %s names its container", v.Name)
			}
			c, _ := e.Container("")
			containers[v.Name] = c.ContainerID
			if err := r.Delete(ctx, v.Name); err != nil {
				return err
			}
		}
		if err := waitAllStopped(ctx, r, servers, containers); err != nil {
			return err
		}
		if err := waitRulesDropped(ctx, r, clientNode); err != nil {
			return err
		}
		if !sleep(ctx, after) {
			return ctx.Err()
		}
		return nil
	})
	if err != nil {
		return err
	}

	return r.Step(ctx, fmt.Sprintf("read the client's log on %s", clientNode), func(ctx context.Context) error {
		read, err := r.Rec.RecordRequests(ctx, clientNode, client, clientID)
		if err == nil {
			failed := 0
			for _, q := range r.Rec.Record().Requests {
				if q.Failed() {
					failed++
				}
			}
			r.Infof("client: %d requests, %d failed (%s)", read.Requests, failed, read.Path)
		}
		return r.Unobserved(ctx, err)
	})
}

// deleteOrder is the variants in the order they are deleted: lastDeleted last.
func deleteOrder() []variant {
	var out []variant
	var last variant
	for _, v := range variants {
		if v.Name == lastDeleted {
			last = v
			continue
		}
		out = append(out, v)
	}
	return append(out, last)
}

// stopWithin bounds the wait for every deleted container to stop: the
// longest grace period, the 2 s minimum the kubelet adds when a preStop used
// it up, and the allowances, twice.
const stopWithin = 2 * (exitGrace + claims.KubeletMinimumGracePeriod + claims.KubeletSyncAllowance + claims.ExitAllowance)

// waitAllStopped lists the run's containers on the node every
// stopProbeEvery (one crictl ps for all) and observes each deleted pod's
// container (crictl inspect, ps, logs) as soon as it is no longer running:
// the kubelet removes a deleted pod's exited container about a second after
// the exit (its next PLEG relist), and one command per look for all five
// keeps the node commands from loading the two cores the timings are taken on.
func waitAllStopped(ctx context.Context, r *lab.Run, node cluster.Node, containers map[string]string) error {
	wctx, cancel := lab.Within(ctx, stopWithin)
	defer cancel()
	pending := maps.Clone(containers)
	var wg sync.WaitGroup
	defer wg.Wait()
	for look := 0; len(pending) > 0; look++ {
		exited := map[string]bool{}
		for _, e := range r.Rec.Record().TaskExits {
			exited[e.ContainerID] = true
		}
		// crictl too, less often: the exit events are the fast path.
		var states map[string]string
		var err error
		if look%psEvery == 0 {
			if states, err = r.Rec.ContainerStates(wctx, node); err != nil {
				if err := r.Unobserved(ctx, err); err != nil || wctx.Err() != nil {
					return err
				}
			}
		}
		for pod, id := range pending {
			if !exited[id] && (states == nil || states[id] == evidence.ContainerRunning) {
				continue
			}
			delete(pending, pod)
			wg.Add(1)
			go func() {
				defer wg.Done()
				o, err := r.Rec.ObserveContainer(ctx, node, pod, id)
				if err == nil {
					r.Infof("%s: crictl %s", pod, o.Describe())
				}
			}()
		}
		if len(pending) > 0 && !sleep(wctx, stopProbeEvery) {
			return r.Unobserved(ctx, fmt.Errorf("waiting for the containers of %v to stop: %w", slices.Sorted(maps.Keys(pending)), context.DeadlineExceeded))
		}
	}
	return nil
}

// waitServing waits until the pod's workload has logged that it serves. The
// workload image carries one tag on every node, and a checkout without
// `heartbeat serve` may have loaded its build last: such a pod exits at once,
// and the run must say so rather than decide claims on nothing.
func waitServing(ctx context.Context, r *lab.Run, node cluster.Node, e evidence.PodEvent) error {
	c, _ := e.Container("")
	wctx, cancel := lab.Within(ctx, servingWithin)
	defer cancel()
	_, err := r.Rec.WaitLog(wctx, node, e.Name, c.ContainerID, "log its serving line", servingProbeEvery, func(s evidence.LogSummary) bool { return s.OnTerm != "" })
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("pod %s never logged that it serves (is the workload image on the nodes built from a checkout without `heartbeat serve`? go tool mage cluster:up loads this one's): %w", e.Name, err)
	}
	return err
}

// waitRulesDropped waits until a read of the client node's rules forwards
// to none of the deleted pods (the reads go on in the background).
func waitRulesDropped(ctx context.Context, r *lab.Run, node cluster.Node) error {
	wctx, cancel := lab.Within(ctx, proxyRulesWithin)
	defer cancel()
	for {
		rec := r.Rec.Record()
		endpoints := victimEndpoints(rec)
		for i := len(rec.ProxyRules) - 1; i >= 0; i-- {
			p := rec.ProxyRules[i]
			if p.Node != node.String() || p.Error != "" {
				continue
			}
			if !forwardsToAny(p, r.Namespace, endpoints) && listsEvery(p, r.Namespace) && len(endpoints) == len(variants) {
				return nil
			}
			break
		}
		if !sleep(wctx, readEvery) {
			return r.Unobserved(ctx, fmt.Errorf("waiting for kube-proxy on %s to stop forwarding to the deleted pods: %w", node, context.DeadlineExceeded))
		}
	}
}

func forwardsToAny(p evidence.ProxyRulesRead, ns string, endpoints map[string]string) bool {
	for name, ep := range endpoints {
		if p.ForwardsTo(servicePort(ns, name), ep) {
			return true
		}
	}
	return false
}

// listsEvery reports whether the read lists an endpoint for every Service
// (the steady pod at least): one that does not says nothing of them.
func listsEvery(p evidence.ProxyRulesRead, ns string) bool {
	for _, v := range variants {
		if len(p.Forwards[servicePort(ns, v.Name)]) == 0 {
			return false
		}
	}
	return true
}

// allForwarding reports whether every Service forwards to its two pods.
func allForwarding(p evidence.ProxyRulesRead, ns string) bool {
	for _, v := range variants {
		if len(p.Forwards[servicePort(ns, v.Name)]) != 2 {
			return false
		}
	}
	return true
}

func lastEvent(rec *evidence.Record, pod string) (evidence.PodEvent, bool) {
	for i := len(rec.PodEvents) - 1; i >= 0; i-- {
		if e := rec.PodEvents[i]; e.Name == pod {
			if c, ok := e.Container(""); ok && c.ContainerID != "" {
				return e, true
			}
		}
	}
	return evidence.PodEvent{}, false
}

// sleep is a hold that ends early only when ctx does (false then).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func names() []string {
	var out []string
	for _, v := range variants {
		out = append(out, v.Name)
	}
	return out
}

// service is a variant's Service: its pod and the steady one.
func service(name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{backendLabel + name: "true"},
			Ports:    []corev1.ServicePort{{Name: portName, Port: port, TargetPort: intstr.FromInt32(port)}},
		},
	}
}

// steadyPod is the pod every Service keeps: it carries every variant's label.
func steadyPod(p *corev1.Pod) error {
	p.Name = steady
	for _, v := range variants {
		p.Labels[backendLabel+v.Name] = "true"
	}
	return nil
}

// pod makes the manifest's pod into the variant's.
func (v variant) pod(p *corev1.Pod) error {
	p.Name = v.Name
	p.Labels[backendLabel+v.Name] = "true"
	grace := int64(v.Grace / time.Second)
	p.Spec.TerminationGracePeriodSeconds = &grace
	c := &p.Spec.Containers[0]
	for i, a := range c.Args {
		switch {
		case strings.HasPrefix(a, "--on-term="):
			c.Args[i] = "--on-term=" + v.OnTerm
		case strings.HasPrefix(a, "--answer-after="):
			c.Args[i] = "--answer-after=" + v.answerAfter().String()
		}
	}
	switch v.PreStop {
	case execPreStop:
		c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"/heartbeat", "sleep", v.Sleep.String()}}}}
	case nativePreStop:
		c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: int64(v.Sleep / time.Second)}}}
	}
	return nil
}
