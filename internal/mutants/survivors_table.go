package mutants

// Reasons shared by several surviving mutants.
const (
	nsDeleteSeen        = "reviewed: the namespace's own update after the delete (deletionTimestamp, no conditions yet): the claims time the delete from the request (the action, or the audit log by -by), and the next event shows the deletionTimestamp again"
	nsPodStart          = "reviewed: the claim-holding pod's start (Pending states): lab:namespace's claims read the pod from its Running state at the namespace's delete on"
	nsPodRepeat         = "reviewed: the next event, at the same instant, shows the same deletion (the kubelet's and the controller's updates of one moment)"
	nsPodExitAgain      = "reviewed: the kubelet's final delete (grace 0) 0.23 s later shows the same exit 0, inside the exit's bound; the pod's end is timed by its DELETED"
	nsKubeEvents        = "reviewed: none of lab:namespace's claims reads Kubernetes Events: the pod's end is read from its watch, the controllers' acts from the audit log (a gap in their watch is one in Gaps, which its claims read for the other watches, so it is not computed equivalent)"
	nsPodsBefore        = "reviewed: the pods watch before the claim's delete or at cleanup: the claims' windows on the pod run from the claim's delete to its DELETED (a gap before ends in a re-list, which the state at the namespace's delete comes from)"
	nsNamespacesQuiet   = "reviewed: no namespace is being deleted in this step (setup, the claim's delete, cleanup): the namespace windows run from each namespace's delete to its DELETED"
	afterUntaint        = "reviewed: after the taint's removal, around the kubelet restart: no claim states what the node shows then"
	updateBeforeDeleted = "reviewed: claims.Deleted.UpdateBeforeDeleted requires the force delete's update (grace 0) before the DELETED, not how long before (3–28 ms in the committed runs: the API server writes both in one request); stretched or shrunk it is still before"
	cleanup             = "reviewed: cleanup comes after everything the claims state"
	runningLookMoved    = "reviewed: claims.RunningAfterDeleted requires crictl's looks after the DELETED (for lab:orphan, the last one after the node left Ready, all before the kubelet's start) to show the container running, and bounds no time between them: ×2 or ×0.5 of a look's distance from the DELETED or the NotReady keeps it on the same side, inside the window"
	orphanStopMoved     = "reviewed: of lab:orphan's claims only node_not_ready reads the kubelet stop's time (claims.KubeletStopNotReady): moved 2 s, or by ×2 or ×0.5 of the 0.07 s to the force delete, the node's NotReady stays 39.6–65 s after it (49.1 s here); which of termlab's own two requests came first is not the cluster's behaviour"
	orphanLastBeat      = "missing claim: heartbeat_advancing bounds the last heartbeat only from below (after the DELETED), not by the crictl read that returned it (at most an --interval and the clocks' uncertainty before it): moved to half or twice its 48.5 s from the DELETED (about 24 s before, or 48 s after, that read) it passes"
	createUnread        = "reviewed: the lab's claims read a create only in <lab>.watch_order, which requires its pod to be first seen after it was sent (and with no lower bound: a watch's delivery has none): dropped, the pod is judged by its own claims as any pod the watch shows; moved earlier, or later by less than the time to its pod's ADDED, it stays before that event. The shared code that reads a create otherwise is reached by other labs only (claims.existedFrom by lab:kwok's fidelity claims; claims.DeletionHeld by lab:finalizer), and the API server's clock is measured from termlab's requests only against an audit log, which this run did not keep"
	hostClock           = "reviewed: the run reached the nodes by docker exec, so their clocks are the host's kernel clock (evidence.Record.SharesHostClock): without the node's measured offset an interval is taken uncorrected, which the offsets measured here (under 1.5 ms, ± under 2.5 ms) barely changed, and no claim is left not checked"
	creationLook        = "reviewed: the look at creation only records the container ID; the claims rest on the looks after the delete"
	exitRace            = "reviewed: 143 is a kill as much as 137, and the claim requires a kill, not which one: the kubelet's cgroup cleanup (SIGKILL, 137) and its own kill (SIGTERM first, 143) race"
	forceUpdate         = "reviewed: the force delete's update (deletionTimestamp, grace 0) just before the original's DELETED: lab:statefulset asks when the replacement comes, timed from that DELETED, and the update moves no time it states (lab:force and lab:orphan, which ask what a force delete does to the object, require it: claims.Deleted.UpdateBeforeDeleted)"
	gapAfterDeleted     = "reviewed: after the pod's DELETED: no claim rests on the absence of a pod event once the object is gone"
	gapAfterReplaced    = "reviewed: after the replacement ran: no claim rests on the absence of a pod event then"
	gapBeforeDelete     = "reviewed: before the delete request: the claims' windows on the pods watch begin at it"
	gapCreate           = "reviewed: no claim rests on an absence while the pods are created (the deletion windows begin at the delete request)"
	gapKubeEvents       = "reviewed: no claim rests on the absence of a Kubernetes Event (they are cited or counted, never required absent), so a gap in their watch hides nothing a claim states"
	gapNodesOutside     = "reviewed: no claim rests on the absence of a node event in this step: the NotReady claim's window runs from the kubelet stop to the node leaving Ready"
	kwokNextShows       = "reviewed: the pod's next event shows the same changes, so the flat list of transitions the fidelity claims compare (times and event boundaries aside) is the same"
	kwokSetup           = "reviewed: kwok's own check before any pod exists"
	nextShows           = "reviewed: the pod's next event, within 1 s, shows the same deletion state, so each state the claims need is still seen, inside its bound"
	noNodes             = "reviewed: the lab does nothing to a node and none of its claims reads the nodes' Ready condition"
	oosFromActions      = "reviewed: the out-of-service taint is taken from the lab's own taint request (actions), not from the node's watch"
	otherWorker         = "reviewed: the other worker's Ready condition: the lab stops the kubelet of termlab-worker2 only"
	readyAgain          = "reviewed: termlab-worker2 Ready again after the kubelet restart: no claim states when it returns (the lab waits for it before cleanup)"
	scaleKubeEvents     = "reviewed: one Event fewer moves the namespace's bound by 10 ms (100 Events/s); no claim needs a particular Event"
	scaleStartUp        = "reviewed: a pod's start-up, before the namespace delete: every_pod_ran needs one event per pod showing it Running, and another still does"
	scaleTransitions    = "reviewed: lab:scale counts pods (each one's DELETED, finalizer pods held until released, the LISTs' states in the record), not their transitions: those are lab:kwok's fidelity claims"
	splitByLedger       = "reviewed: the two writers are shown by the ledger's writes of both incarnations, not by crictl's looks during the hold"
	ssKubeEvents        = "reviewed: the StatefulSet controller's SuccessfulCreate Event is observed, not required (Events are best effort and aggregated); no other claim reads Events"
	startUp             = "reviewed: the pod's start-up, before any delete: the claims read a pod from the delete request on, and take from its start only what every later event repeats (container ID, node, labels)"
	taintLater          = "reviewed: the next event carrying the unreachable taint (12 s later, at the kubelet's return) is still inside the taint's bound (70 s after the stop)"
	unknownRepeated     = "reviewed: another event of termlab-worker2 says Ready=Unknown within 0.3 s of this one, so the NotReady claim's time moves by less than its margin"
	// lab:kwok (its reference record 20261202-113404-afa8).
	kwokFastDeleted     = "reviewed: the fast stages' DELETED is kwok's grace-0 delete, which the API server carries out in the request that sets grace 0 (its MODIFIED and DELETED were observed within 1 ms here, 0.149 s after the lab's delete): grace_collapsed_never_terminated bounds the grace 0 (within 3.5 s of the delete), and requires no terminated state before the DELETED and the DELETED itself, not the DELETED's distance from the delete; ×2 (0.30 s) or ×0.5 (0.075 s) keeps the events' order on the watch, which is what the claims read"
	kwokReleasedDeleted = "reviewed: v0.8's finalizer pod is DELETED 7.41 s after the lab's ordinary delete because the lab removed its finalizer then (the lab's schedule: grace 0, 3 s quiet, force delete, 3 s quiet, release); grace_collapsed_never_terminated requires it after the force delete and after the release (the shrink, before the release, is killed), not how soon after the release the API server deletes a grace-0 object whose last finalizer went, which is the API server's and not kwok's"
	kwokStripped        = "reviewed: reported_bug claims the reported transitions, in that order, with no finalizer removal by the lab before the DELETED, not how soon kwok ≤ v0.7 strips the finalizer (0.119 s after the delete here) or deletes (0.168 s): ×2 or ×0.5 keeps the order, and even the bound the fast stages' grace 0 is held to (kwok's watch and its request, 3.5 s) would hold them"
	kwokCreateEarlier   = "reviewed: a create sent earlier is still before the pod's first watch event and before its delete (stage_sets and matches_kubelet check both orders); the ADDED then comes 2 s (plain-kubelet's ×2: 1.5 s) after the request instead of 17–21 ms, which is the API server's and the watch's latency under load, not what kwok or the kubelet does with the pod: no claim bounds it"
	kwokForceMoved      = "reviewed: the force delete comes 3 s after the last pod of its scenario reached grace 0 (the lab waits until quiet): moved 2 s either way (faithful's, ×2 earlier: 3.0 s; ×0.5 later: 1.5 s) it still falls after every transition but the DELETED and before the release (grace 0 at 11:34:06.15–07.30, the force delete at 11:34:10.31, the release at 11:34:13.33), so each claim places it where it was: the faithful pod at the kubelet's place (matches_kubelet), the v0.8 pod still held through it (grace_collapsed_never_terminated); no claim times it"
	kwokReleaseEarlier  = "reviewed: the release moved earlier (2 s, or v0.8's 10 ms ×2) or 5 ms later is still after the force delete and before the DELETED, which is the order the claims require (matches_kubelet places it before the DELETED on both pods, grace_collapsed_never_terminated requires the v0.8 pod DELETED after it); the DELETED then comes 2.02 s after the release instead of 17–27 ms, the API server's deletion of a grace-0 object whose last finalizer went and the watch's latency, which no claim of lab:kwok bounds (what the lab asks is whether the object stayed until the release)"
	// lab:sidecar (its timings: 10 passing runs of 2026-12-04, soak -from).
	sidecarPodEvents      = "reviewed: lab:sidecar takes from a pod's watch events only each container's ID, which every event after the first repeats, and the kubelet's terminated exit code only where crictl never saw an exit (it saw every one in the reference run); its times come from the delete request, crictl and the workloads' logs"
	sidecarKubeEvents     = "reviewed: of the Kubernetes Events lab:sidecar reads only Killing, of pod sidecars (its preStops' start); Scheduled, Pulled, Created and Started are read by no claim, nor is sidecars-overrun's Killing"
	sidecarEndedInside    = "reviewed: overrun_sidecars_ended_right_after bounds a sidecar's exit through its SIGTERM (within ±1.5 s of the main container's kill, a vouched timing) and its exit within 2.5 s of that SIGTERM (shortGrace): ×2 of about 1 s stays under 2.5 s; ended_after_main_killed is reported, not bounded by itself"
	sidecarExitTooSoon    = "missing claim: overrun_sidecars_ended_right_after says each sidecar's 1 s term delay fits in the short grace, but requires only that the exit comes within 2.5 s of the SIGTERM, not after the term delay: the exit moved to half as long after the SIGTERM (0.5 s) passes"
	sidecarTogether       = "reviewed: overrun_sidecars_ended_right_after requires the two SIGTERMs within 0.5 s of each other: 0.006 s ×2 or ×0.5 stays inside"
	sidecarStartsOrder    = "reviewed: reverse_start_order claims the order of the starts (sidecar-a, then sidecar-b, then app), which a distance doubled or halved keeps; how long each start takes after the one before (the kubelet waits for a sidecar's startup, here 0.6 s) is not claimed"
	sidecarKillingEvents  = "reviewed: the Killing events came 0.03–0.06 s after the delete and 0.03 s apart; doubled or halved they stay inside the 3.5 s prestop_with_main allows for the kubelet's sync after a delete and the 1 s spread (the watch's allowance) it states"
	sidecarMainSigterm    = "reviewed: app's SIGTERM came 2.03 s after its Killing event (its 2 s preStop); doubled (4.1 s) or halved (1.0 s) it stays inside what prestop_with_main allows, the preStop less the 1 s a watch may take to show the event, to the preStop plus the kubelet's 3.5 s sync, and (doubled from the delete) before app's exit, which is all sidecars_after_main orders against it"
	sidecarAExitLater     = "reviewed: doubled, sidecar-a's exit is 15.5 s after the delete and 8.8 s after its SIGTERM: still exit code 0 inside the 30 s grace, which is what the claim says of it (not killed); how long a sidecar takes after its SIGTERM is its own term delay, not the kubelet's order"
	sidecarASigterm       = "reviewed: sidecar-a's SIGTERM is bounded against the exit it waits for, sidecar-b's (reverse_start_order: within 2.5 s, 1.94 s once stretched), not against app's; its distance from app's exit is context"
	sidecarOverrunSigterm = "reviewed: overrun_main_killed_at_grace_end bounds the overrun app's SIGTERM below only (after its 2 s preStop): doubled, 4.1 s after the delete, it is still after the preStop and before the kill at 6.1 s, which the claim bounds both ways"
	sidecarDeleteMoved    = "reviewed: 2 s earlier, every timing from the pod's delete grows by 2 s and stays inside its bound (the Killing events 2.0 s after it of the 3.5 s allowed, the overrun app's SIGTERM 4.1 s ≥ 2 s and its kill 8.1 s ≤ 11 s); moved toward the next action, the ordered pod's delete moves 33 ms or less (the overrun pod's delete follows 33 ms later), the Killing events still after it"
	sidecarOtherLook      = "reviewed: another crictl look of the same container shows it exited (the last exited look decides), or, with none, its own exit line and the kubelet's terminated status give the same exit, within the claims' margins"
	// lab:graceful.
	gracefulPodEvents    = "reviewed: lab:graceful takes from the pods' watch events only what every later event of a pod repeats (its node, container ID and deletionTimestamp); its times start at termlab's delete request and end in the client's log, the EndpointSlice watch, the node's rules, crictl and containerd, never at a pod's phase, container state or DELETED"
	gracefulPodsGap      = "reviewed: no claim of lab:graceful rests on an absence in the pods watch: its absences (no failed request, no forwarding after the drop) are read from the client's log and the node's rules"
	gracefulSliceBefore  = "reviewed: a slice event before the delete (the slice made empty, the steady pod joining, the variant's pod joining): the claims read the slice from the delete on, and the pod's address is in every later event that lists it"
	gracefulSliceRemoved = "reviewed: the endpoint leaving the slice after it was terminating: no claim states when it leaves; where connections go is read from the client node's rules directly"
	gracefulOneFailure   = "reviewed: one failure fewer of exit-now's: the claim states that requests fail and that each lies in a named window, not how many fail"
	gracefulTaskExit     = "reviewed: containerd's exit event (containers/task-exits-<node>.log) records the same exit, and lab:graceful takes it where crictl's looks show none"
	gracefulTaskExitRead = "missing claim: no claim of lab:graceful checks containerd's task exit against crictl's exited look of the same container: facts.go's exit() takes crictl's exit first and reads a task exit only for a variant whose exit crictl never saw, which in the reference run is none, so a task exit's status or time changes nothing"
	gracefulTerminating  = "reviewed: endpoint_terminating bounds each variant's terminating endpoint above only, 3 s after the delete: ×2 of 0.329 s at most stays inside, and ×0.5 (a faster controller, still after the delete) contradicts nothing it states"
	gracefulPropagation  = "reviewed: a propagation is bounded above, by client_node_stops_forwarding's 10 s and, for exec-sleep and native-sleep, by prestop_sleep_loses_nothing's 10 s preStop sleep: ×2 of 2.142 s at most stays inside both"
	gracefulHookReturn   = "reviewed: sigterm_after_prestop bounds exec-sleep's SIGTERM after its preStop's end to -0.1 s … 3.5 s (hookReturnWithin, the kubelet's sync): 0.548 s ×2 or ×0.5 stays inside"
	gracefulHookStart    = "reviewed: sigterm_after_prestop bounds exec-sleep's preStop start after the delete to -0.1 s … 3.5 s (the kubelet's sync): 2.533 s ×0.5 stays inside (its ×2 is killed)"
	gracefulProxyLater   = "reviewed: the variant's drop is seen one read later (a read took 0.1–1.6 s in this run, 0.1 s apart): its propagation grows by that and stays inside client_node_stops_forwarding's 10 s bound (2.142 s at most here) and short of the 10 s preStop sleep prestop_sleep_loses_nothing compares it with; the claims bound the propagation, not which read first shows the drop"
	// lab:mount.
	mountPodEvents          = "reviewed: lab:mount reads no state from this event (pending, running, or marked for deletion with its container still running): only the pod's UID and container ID, which the other events repeat; the exit is crictl's, the hold the kubelet's journal and the node's mount table"
	mountTerminal           = "reviewed: the kubelet reports the pod terminal (phase Succeeded, its container terminated with exit 0) in two events before the DELETED (rv 1038 and 1109): with one dropped, the other still shows it (its container state flipped is mount.container_exited's to catch)"
	mountOneFailure         = "reviewed: one failed unmount fewer of six: at least three remain, and the last one before the release, whose retry time bounds the DELETED, is kept"
	mountJournalOther       = "reviewed: a kubelet line the claims do not read (the unmount's start, the kubelet's HTTP log, the orphaned pod's cleanup, the failure's 'Unmounting arguments' line)"
	mountOtherNode          = "reviewed: every node time lab:mount's claims read (the kubelet's journal, crictl's looks, the mount looks) was recorded on termlab-worker in this run, so no interval is taken on termlab-worker2's clock"
	finalizerCreateRead     = "reviewed: lab:finalizer's claims read a create only as where the pod can first have existed (claims.existedFrom, where a check for watch gaps before the delete begins): dropped, the record's start takes its place, and moved earlier it still precedes every event of the pod; with no gap in this record, nothing a claim decides changes"
	finalizerUpdateEarly    = "reviewed: object_stays accepts the request's effect already in the last watch event before the request (update_seen_before_request), because the kubelet's or kwok's own grace-0 delete can come first and the request then writes nothing new; a delete or force moved later than the update it caused finds that state there and passes. Telling the two apart needs the API server's audit of who wrote the update, which lab:finalizer does not keep"
	finalizerDeleteEarly    = "reviewed: the kwok pod's delete moved earlier by its distance to the force (0.84 s) puts its update 0.85 s after it, still inside the 1 s object_stays states for the watch to show a request's update"
	finalizerReleaseEarly   = "reviewed: the cleanup came 15 ms after the kwok pod's release, so the release moves 15 ms earlier: still after the force's hold (a precondition of termlab's own schedule) and the DELETED 26 ms after it, inside the bound"
	gracefulDeleteFromWatch = "reviewed: with no delete request in the record (a reader's own delete, -by=you, leaves none), a variant's delete time is the watch's first event showing its deletionTimestamp, here 22–219 ms after the request: every window and timing counted from the delete moves by that much, inside each claim's bound"
	gracefulDeleteNudged    = "reviewed: the deletes follow each other 24–220 ms apart, so a delete moved toward its neighbour moves at most 220 ms (earlier) or 110 ms (later): still before its pod's first event with a deletionTimestamp, and every timing counted from it inside its bound (the endpoint terminating within 3 s, the rules within 10 s, exec-sleep's preStop start within 3.5 s)"
	gracefulDelete2sEarlier = "reviewed: 2 s earlier, every timing counted from the variant's delete grows by 2 s and stays inside its bound: the endpoint turning terminating at most 2.28 s after it (3 s allowed), the client node's propagation at most 4.14 s (10 s), native-sleep's SIGTERM 12.56 s (its 10 s preStop plus the kubelet's 3.5 s sync); the other checks on these variants count from the SIGTERM or the exit, not the delete, or bound below only (prestop-overrun's SIGTERM after its 4 s grace)"
	gracefulRequestGap      = "reviewed: the longest gap is between consecutive requests of a client sending every 50 ms (0.79 s here): moving the request that ends it later lands it among the requests that follow, so the longest gap becomes the one to the next request, still under the 1 s (20 sends) the claim allows; halved, the gap is shorter"
	gracefulOverrunPreStop  = "reviewed: prestop_counts_against_grace bounds prestop-overrun's preStop start within the kubelet's 3.5 s sync after the delete and from below only by the delete itself (the kubelet may act at once: 0.4 s in the soak of 2026-12-07): the start shrunk to half its 2.25 s stays inside"
	gracefulFasterProxy     = "reviewed: client_node_stops_forwarding bounds the propagation above only (10 s): halved, 0.78 s, still after the delete and after the endpoint turned terminating (0.33 s), is a faster kube-proxy, which contradicts nothing it states"
	gracefulExitNowSigterm  = "reviewed: no claim bounds exit-now's SIGTERM against the delete; halved (0.32 s after it, a less loaded kubelet), the process stops accepting sooner and every failure still falls after the stop and before the client's node dropped the endpoint, or in flight at the stop: the attribution holds"
	gracefulIgnoreSigterm   = "reviewed: halved, ignore-term's SIGTERM 0.48 s after the delete makes its kill 5.67 s after the SIGTERM, inside the 5 s grace (−0.5 s, +1 s) sigkill_at_grace_end states"
	scaleFigureOnly         = "reviewed: delete_to_last_deleted_seconds is a figure lab:scale measures (its deletion rate, compared across runs in docs/scale-measurements.md), not a bound: every_pod_deleted claims that every listed pod reached DELETED and the final LIST is empty, which a slower or faster deletion keeps"
	scaleMarkedAfterDelete  = "reviewed: scale.deleted requires every pod to be first seen with a deletionTimestamp after the namespace delete was sent; the namespace controller marked the first one 5.0 s after it here (its first pass over the namespace's content), so the delete moved 2 s later, or halfway (3.5 s) to the first release, still precedes every mark. Killing it would need a lower bound on the controller's reaction, which nothing sets"
	scaleReleaseUnbounded   = "missing claim: finalizers_held_until_released orders each pod's DELETED after the lab's release of it but does not bound how long after (release_to_deleted_max_seconds is observed only), so a release moved earlier, which leaves every DELETED after it, passes; a bound needs the pod GC / namespace controller's pace measured at the sizes the lab runs"
	scaleCreatesUnread      = "reviewed: no claim of lab:scale reads the fake nodes' create or the pods' create: they time the creation figures (pods/s created and Running), and the claims rest on the LIST before the namespace delete and the pods' watch"
	scaleNodesDeleteUnread  = "reviewed: the fake nodes' delete is cleanup after the last pod's DELETED and the final LIST; no claim reads it"
	mountBeforeRelease      = "reviewed: before the delete or after the release: the pods watch must be up from the container's exit to the release (a DELETED hidden there would change the claim), not outside it"
	mountHoldLater          = "reviewed: the hold is termlab's own request, and its confirming look is taken after the request returns (0.66 s after it here); moved later than that look, the look counts as before the hold, where nothing is claimed of a holder, and the look just before the release still shows the process holding the mount. The claims' evidence that the mount was busy is the kubelet's own failed unmounts (target is busy), not the time of termlab's request"
	mountReleaseMoved       = "reviewed: the pod went 11.1 s after the release in this record, at the kubelet's back-off retry: moved 2 s either way (or halfway to the next action), the release keeps every order the claims read (busy failures before it, the kubelet's successful unmount and the DELETED after it), and the DELETED's bound is counted from the retry time the kubelet logged, not from the release"
	mountDeleteEarlier      = "reviewed: 2 s earlier, the delete is still after the hold and before the SIGTERM, and the exit lands 3.0 s after it, inside the 5 s container_exited allows (the kubelet's sync after a delete, 3.5 s, plus the 1 s term delay and the exit's 0.5 s): another run may show that"
	mountSigtermSooner      = "reviewed: the SIGTERM's distance from the delete is the kubelet's sync (0.61 s here), which container_exited bounds through the exit (within 5 s of the delete); halved, the SIGTERM is still after the delete and the exit 1.31 s after it, inside the 1 s term delay plus 0.5 s the claim allows"
)

// Survivors are, per lab, the reasons for the mutants no claim kills, as
// go tool mage mutants lists them: a pattern for a family no claim guards,
// else one line per mutant, each reason read against the reference record
// and the claims that read it.
var Survivors = map[string][]Reason{
	"mount": {
		{"drop pod event 1 (MODIFIED mounted)", mountPodEvents},
		{"drop pod event 2 (MODIFIED mounted)", mountPodEvents},
		{"drop pod event 4 (MODIFIED mounted)", mountPodEvents},
		{"drop pod event 5 (MODIFIED mounted)", mountPodEvents},
		{"drop pod event 7 (MODIFIED mounted)", mountTerminal},
		{"drop pod event 8 (MODIFIED mounted)", mountTerminal},
		{"drop node event *", noNodes},
		{"watch gap in the nodes watch *", noNodes},
		{"watch gap in the events watch *", gapKubeEvents},
		{"watch gap in the pods watch over step 0 (*)", mountBeforeRelease},
		{"watch gap in the pods watch over step 1 (*)", mountBeforeRelease},
		{"watch gap in the pods watch over step 4 (cleanup)", cleanup},
		{"flip state mount look 0 (*) holder inactive→active", "reviewed: before the hold nothing is claimed of a holder; the look shows the volume as the kubelet mounted it"},
		{"drop journal entry * (kubelet on *: I server.go:*)", mountJournalOther},
		{"drop journal entry * (kubelet on *: I reconciler_common.go:*)", mountJournalOther},
		{"drop journal entry * (kubelet on *: Unmounting arguments:)", mountJournalOther},
		{"drop journal entry 3 (kubelet on termlab-worker: E nestedpendingoperations.go:348)", mountOneFailure},
		{"drop journal entry 5 (kubelet on termlab-worker: Output: umount:)", mountOneFailure},
		{"drop journal entry 7 (kubelet on termlab-worker: E nestedpendingoperations.go:348)", mountOneFailure},
		{"drop journal entry 9 (kubelet on termlab-worker: Output: umount:)", mountOneFailure},
		{"drop journal entry 12 (kubelet on termlab-worker: E nestedpendingoperations.go:348)", mountOneFailure},
		{"drop journal entry 14 (kubelet on termlab-worker: Output: umount:)", mountOneFailure},
		{"drop journal entry 16 (kubelet on termlab-worker: E nestedpendingoperations.go:348)", mountOneFailure},
		{"drop journal entry 18 (kubelet on termlab-worker: Output: umount:)", mountOneFailure},
		{"drop journal entry 20 (kubelet on termlab-worker: E nestedpendingoperations.go:348)", mountOneFailure},
		{"drop journal entry 22 (kubelet on termlab-worker: Output: umount:)", mountOneFailure},
		{"action 0 (create mounted) dropped", createUnread},
		{"action 0 (create mounted) *earlier*", createUnread},
		{"clock node/termlab-worker dropped", hostClock},
		{"clock node/termlab-worker2 *", mountOtherNode},
		{"action 1 (hold-mount termlab-worker) 2s later", mountHoldLater},
		{"action 1 (hold-mount termlab-worker) later: its distance to what follows ×0.5", mountHoldLater},
		{"action 2 (delete mounted) 2s earlier", mountDeleteEarlier},
		{"action 3 (release-mount termlab-worker) 2s *", mountReleaseMoved},
		{"action 3 (release-mount termlab-worker) later: its distance to what follows ×0.5", mountReleaseMoved},
		{"shrink ×0.5 mount.container_exited sigterm_after_seconds (*)", mountSigtermSooner},
	},
	"finalizer": {
		{"watch gap in the events watch *", gapKubeEvents},
		{"watch gap in the pods watch over step *(cleanup)", cleanup},
		{"watch gap in the nodes watch over step *(cleanup)", cleanup},
		{"watch gap in the nodes watch *", noNodes},
		{"drop node event *", noNodes},
		{"drop pod event 1 (MODIFIED held)", startUp},
		{"drop pod event 2 (MODIFIED held)", startUp},
		{"drop pod event 4 (MODIFIED held)", startUp},
		{"drop pod event 12 (MODIFIED held-kwok)", startUp},
		{"drop pod event 13 (MODIFIED held-kwok)", startUp},
		{"drop pod event 14 (MODIFIED held-kwok)", startUp},
		{"flip state pod event 14 (MODIFIED held-kwok) container heartbeat running→terminated", startUp},
		{"drop pod event 5 (MODIFIED held)", nextShows},
		{"drop pod event 7 (MODIFIED held)", nextShows},
		{"drop pod event 8 (MODIFIED held)", nextShows},
		{"drop pod event 15 (MODIFIED held-kwok)", nextShows},
		{"drop pod event 16 (MODIFIED held-kwok)", nextShows},
		{"flip state pod event 16 (MODIFIED held-kwok) container heartbeat terminated→running", nextShows},
		{"watch gap in the pods watch over step 0 (kubelet: create pod held on termlab-worker and wait until it is Ready)", gapCreate},
		{"watch gap in the pods watch over step 4 (kwok: create pod held-kwok on a kwok fake node and wait until it is Ready)", gapCreate},
		{"action 0 (create held) dropped", finalizerCreateRead},
		{"action 0 (create held) *earlier*", finalizerCreateRead},
		{"action 4 (create held-kwok) dropped", finalizerCreateRead},
		{"action 4 (create held-kwok) *earlier*", finalizerCreateRead},
		{"action 2 (force-delete held) *later*", finalizerUpdateEarly},
		{"action 5 (delete held-kwok) *later*", finalizerUpdateEarly},
		{"action 6 (force-delete held-kwok) *later*", finalizerUpdateEarly},
		{"action 5 (delete held-kwok) earlier: its distance to what follows ×2", finalizerDeleteEarly},
		{"action 7 (remove-finalizers held-kwok) earlier: its distance to what follows ×2", finalizerReleaseEarly},
	},
	"force": {
		{"watch gap in the events watch *", gapKubeEvents},
		{"watch gap in the pods watch over step *(cleanup)", cleanup},
		{"watch gap in the nodes watch over step *(cleanup)", cleanup},
		{"watch gap in the nodes watch *", noNodes},
		{"drop node event *", noNodes},
		{"drop pod event 1 (MODIFIED slow-exit)", startUp},
		{"drop pod event 2 (MODIFIED slow-exit)", startUp},
		{"drop pod event 4 (MODIFIED slow-exit)", startUp},
		{"watch gap in the pods watch over step 0 (create pod slow-exit on termlab-worker and wait until it is Ready)", gapCreate},
		{"watch gap in the pods watch over step 2 (look at the container on termlab-worker)", gapAfterDeleted},
		{"watch gap in the pods watch over step 3 (wait for the container to stop)", gapAfterDeleted},
		{"action 0 (create slow-exit) dropped", createUnread},
		{"action 0 (create slow-exit) *earlier*", createUnread},
		{"* force.container_outlives_object first_seen_running_after_deleted_seconds (*)", runningLookMoved},
		{"* force.api_object_gone update_before_deleted_seconds (*)", updateBeforeDeleted},
	},
	"orphan": {
		{"* orphan.api_object_exists_false update_before_deleted_seconds (*)", updateBeforeDeleted},
		{"watch gap in the events watch *", gapKubeEvents},
		{"watch gap in the pods watch over step *(cleanup)", cleanup},
		{"watch gap in the nodes watch over step *(cleanup)", cleanup},
		{"exit code of pod orphan-process's container 1 137→143", exitRace},
		{"drop pod event 1 (MODIFIED orphan-process)", startUp},
		{"drop pod event 2 (MODIFIED orphan-process)", startUp},
		{"drop pod event 4 (MODIFIED orphan-process)", startUp},
		{"drop node event 0 (LISTED termlab-worker Ready=True)", otherWorker},
		{"drop node event 2 (MODIFIED termlab-worker2 Ready=Unknown)", unknownRepeated},
		{"drop node event 3 (MODIFIED termlab-worker2 Ready=Unknown)", unknownRepeated},
		{"drop node event 4 (MODIFIED termlab-worker2 Ready=True)", readyAgain},
		{"drop node event 5 (MODIFIED termlab-worker2 Ready=True)", readyAgain},
		{"watch gap in the pods watch over step 0 (create pod orphan-process on termlab-worker2 and record its container ID)", gapCreate},
		{"watch gap in the pods watch over step 1 (stop only the kubelet on termlab-worker2)", gapBeforeDelete},
		{"watch gap in the pods watch over step 3 (look at the container on termlab-worker2: state and heartbeat)", gapAfterDeleted},
		{"watch gap in the pods watch over step 4 (wait for termlab-worker2 to turn NotReady)", gapAfterDeleted},
		{"watch gap in the pods watch over step 5 (start the kubelet on termlab-worker2 and watch the container)", gapAfterDeleted},
		{"watch gap in the pods watch over step 6 (wait for termlab-worker2 to be Ready again)", gapAfterDeleted},
		{"watch gap in the nodes watch over step 0 (create pod orphan-process on termlab-worker2 and record its container ID)", gapNodesOutside},
		{"watch gap in the nodes watch over step 5 (start the kubelet on termlab-worker2 and watch the container)", gapNodesOutside},
		{"watch gap in the nodes watch over step 6 (wait for termlab-worker2 to be Ready again)", gapNodesOutside},
		{"action 0 (create orphan-process) dropped", createUnread},
		{"action 0 (create orphan-process) *earlier*", createUnread},
		{"* orphan.container_running first_seen_running_after_deleted_seconds (*)", runningLookMoved},
		{"* orphan.container_running last_look_after_not_ready_seconds (*)", runningLookMoved},
		{"action 1 (stop-kubelet termlab-worker2) 2s earlier", orphanStopMoved},
		{"action 1 (stop-kubelet termlab-worker2) 2s later", orphanStopMoved},
		{"action 1 (stop-kubelet termlab-worker2) earlier: its distance to what follows ×2", orphanStopMoved},
		{"action 1 (stop-kubelet termlab-worker2) later: its distance to what follows ×0.5", orphanStopMoved},
		{"* orphan.heartbeat_advancing last_beat_after_deleted_seconds (*)", orphanLastBeat},
	},
	"stuck": {
		{"watch gap in the events watch *", gapKubeEvents},
		{"watch gap in the pods watch over step *(cleanup)", cleanup},
		{"watch gap in the nodes watch over step *(cleanup)", cleanup},
		{"drop pod event 1 (MODIFIED stuck)", startUp},
		{"drop pod event 2 (MODIFIED stuck)", startUp},
		{"drop pod event 4 (MODIFIED stuck)", startUp},
		{"drop pod event 6 (MODIFIED stuck)", nextShows},
		{"drop pod event 8 (MODIFIED stuck)", nextShows},
		{"drop pod event 9 (MODIFIED stuck)", nextShows},
		{"drop node event 0 (LISTED termlab-worker Ready=True)", otherWorker},
		{"drop node event 2 (MODIFIED termlab-worker2 Ready=Unknown)", unknownRepeated},
		{"drop node event 3 (MODIFIED termlab-worker2 Ready=Unknown)", unknownRepeated},
		{"drop node event 5 (MODIFIED termlab-worker2 Ready=Unknown)", oosFromActions},
		{"drop node event 6 (MODIFIED termlab-worker2 Ready=Unknown)", afterUntaint},
		{"drop node event 7 (MODIFIED termlab-worker2 Ready=True)", readyAgain},
		{"drop node event 8 (MODIFIED termlab-worker2 Ready=True)", readyAgain},
		{"drop node event 9 (MODIFIED termlab-worker2 Ready=True)", readyAgain},
		{"exit code of pod stuck's container 1 137→143", exitRace},
		{"watch gap in the pods watch over step 0 (create pod stuck on termlab-worker2 and record its container ID)", gapCreate},
		{"watch gap in the pods watch over step 1 (stop only the kubelet on termlab-worker2)", gapBeforeDelete},
		{"watch gap in the pods watch over step 5 (remove the taint, start the kubelet on termlab-worker2 and watch the container)", gapAfterDeleted},
		{"watch gap in the pods watch over step 6 (wait for termlab-worker2 to be Ready again)", gapAfterDeleted},
		{"watch gap in the nodes watch over step 0 (create pod stuck on termlab-worker2 and record its container ID)", gapNodesOutside},
		{"watch gap in the nodes watch over step 3 (hold until 15s past the grace deadline and 20s past NotReady: stuck stays Terminating, its container runs)", gapNodesOutside},
		{"watch gap in the nodes watch over step 4 (taint termlab-worker2 out-of-service and wait for the pod GC to delete stuck)", gapNodesOutside},
		{"watch gap in the nodes watch over step 5 (remove the taint, start the kubelet on termlab-worker2 and watch the container)", gapNodesOutside},
		{"watch gap in the nodes watch over step 6 (wait for termlab-worker2 to be Ready again)", gapNodesOutside},
		{"* stuck.stays_terminating marked_after_seconds (*)", stuckMarkedSooner},
		{"* stuck.container_running_after_gone first_seen_running_after_deleted_seconds (*)", runningLookMoved},
		{"shrink ×0.5 stuck.container_stopped_after_kubelet_restart *", stuckKilledSooner},
		{"action 5 (start-kubelet termlab-worker2) 2s later", stuckKilledSooner},
		{"action 5 (start-kubelet termlab-worker2) later: its distance to what follows ×0.5", stuckKilledSooner},
		{"action 0 (create stuck) dropped", stuckCreateClock},
		{"action 0 (create stuck) *earlier*", stuckCreateClock},
		{"audit entry 0 (*", stuckCreateClock},
		{"action 1 (stop-kubelet termlab-worker2) 2s *", stuckStopMoved},
		{"action 1 (stop-kubelet termlab-worker2) earlier: its distance to what follows ×2", stuckStopMoved},
		{"action 1 (stop-kubelet termlab-worker2) later: its distance to what follows ×0.5", stuckStopMoved},
		{"action 3 (taint-node termlab-worker2) 2s later", stuckTaintLater},
		{"action 3 (taint-node termlab-worker2) later: its distance to what follows ×0.5", stuckTaintLater},
		{"action 4 (untaint-node termlab-worker2) *", stuckUntaint},
		{"audit entry 14 (*", stuckUntaint},
		{"audit entry 1 (*", stuckStartUpAudit},
		{"audit entry 2 (*", stuckStartUpAudit},
		{"audit entry 3 (*", stuckStartUpAudit},
		{"audit entry 4 (*", stuckStartUpAudit},
		{"audit entry 5 (*", stuckDeleteAudit},
		{"audit entry 6 (*", stuckNodeTaintsAudit},
		{"audit entry 7 (*", stuckNodeTaintsAudit},
		{"audit entry 8 (*", stuckNodeControllerPod},
		{"audit entry 9 (*", stuckTaintAudit},
		{"audit entry 10 (*", stuckNodeControllerPod},
		{"audit entry 11 (*", stuckNodeControllerPod},
		{"audit entry 15 (*", afterUntaint},
		{"audit entry 16 (*", afterUntaint},
		{"audit entry 17 (*", afterUntaint},
		{"audit entry 18 (*", cleanup},
	},
	"statefulset": {
		{"watch gap in the events watch *", gapKubeEvents},
		{"watch gap in the pods watch over step *(cleanup)", cleanup},
		{"watch gap in the nodes watch over step *(cleanup)", cleanup},
		{"drop kube event *", ssKubeEvents},
		{"drop pod event 1 (MODIFIED ledger-7c59d77f4d-2nd9r)", startUp},
		{"drop pod event 2 (MODIFIED ledger-7c59d77f4d-2nd9r)", startUp},
		{"drop pod event 4 (MODIFIED ledger-7c59d77f4d-2nd9r)", startUp},
		{"drop pod event 6 (MODIFIED ident-0)", startUp},
		{"drop pod event 7 (MODIFIED ident-0)", startUp},
		{"drop pod event 9 (MODIFIED ident-0)", startUp},
		{"drop pod event 15 (MODIFIED ident-0)", startUp},
		{"drop pod event 16 (MODIFIED ident-0)", startUp},
		{"flip state pod event 4 (MODIFIED ledger-7c59d77f4d-2nd9r) container ledger running→terminated", startUp},
		{"drop pod event 11 (MODIFIED ident-0)", nextShows},
		{"drop pod event 12 (MODIFIED ident-0)", forceUpdate},
		{"drop node event 0 (LISTED termlab-worker Ready=True)", otherWorker},
		{"drop node event 2 (MODIFIED termlab-worker2 Ready=Unknown)", unknownRepeated},
		{"drop node event 3 (MODIFIED termlab-worker2 Ready=Unknown)", unknownRepeated},
		{"drop node event 4 (MODIFIED termlab-worker2 Ready=Unknown)", taintLater},
		{"drop node event 5 (MODIFIED termlab-worker2 Ready=True)", readyAgain},
		{"drop node event 6 (MODIFIED termlab-worker2 Ready=True)", readyAgain},
		{"drop node event 7 (MODIFIED termlab-worker2 Ready=True)", readyAgain},
		{"flip state crictl look 3 (ident-0, step \"hold 10s: two ident-0 processes, on two nodes, write to the ledger\") CONTAINER_RUNNING→CONTAINER_EXITED", splitByLedger},
		{"exit code of pod ident-0's container 1 137→143", exitRace},
		{"watch gap in the pods watch over step 0 (create the ledger on termlab-control-plane and wait until it answers through the service proxy)", gapCreate},
		{"watch gap in the pods watch over step 1 (create StatefulSet ident (one replica, preferring termlab-worker2) and wait for ident-0 to run and write to the ledger)", gapCreate},
		{"watch gap in the pods watch over step 2 (stop only the kubelet on termlab-worker2)", gapBeforeDelete},
		{"watch gap in the pods watch over step 5 (hold 10s: two ident-0 processes, on two nodes, write to the ledger)", gapAfterReplaced},
		{"watch gap in the pods watch over step 6 (start the kubelet on termlab-worker2, watch it kill the old container, let the new one write alone 5s and read the ledger)", gapAfterReplaced},
		{"watch gap in the pods watch over step 7 (wait for termlab-worker2 to be Ready again)", gapAfterReplaced},
		{"watch gap in the nodes watch over step 0 (create the ledger on termlab-control-plane and wait until it answers through the service proxy)", gapNodesOutside},
		{"watch gap in the nodes watch over step 1 (create StatefulSet ident (one replica, preferring termlab-worker2) and wait for ident-0 to run and write to the ledger)", gapNodesOutside},
		{"watch gap in the nodes watch over step 4 (force delete ident-0 and wait for its replacement (a new UID) to run)", gapNodesOutside},
		{"watch gap in the nodes watch over step 5 (hold 10s: two ident-0 processes, on two nodes, write to the ledger)", gapNodesOutside},
		{"watch gap in the nodes watch over step 6 (start the kubelet on termlab-worker2, watch it kill the old container, let the new one write alone 5s and read the ledger)", gapNodesOutside},
		{"watch gap in the nodes watch over step 7 (wait for termlab-worker2 to be Ready again)", gapNodesOutside},
	},
	"kwok": {
		{"watch gap in the events watch *", gapKubeEvents},
		{"watch gap in the pods watch over step *(cleanup)", cleanup},
		{"watch gap in the nodes watch over step *(cleanup)", cleanup},
		{"watch gap in the nodes watch *", noNodes},
		{"drop node event 0 (LISTED termlab-worker Ready=True)", noNodes},
		{"drop node event * (MODIFIED *)", noNodes},
		{"drop pod event 8 (MODIFIED finalizer-kwok-v07-fast)", startUp},
		{"drop pod event 9 (MODIFIED finalizer-faithful)", startUp},
		{"drop pod event 11 (MODIFIED finalizer-faithful)", startUp},
		{"drop pod event 12 (MODIFIED finalizer-kubelet)", startUp},
		{"drop pod event 13 (MODIFIED plain-kwok-v08-fast)", startUp},
		{"drop pod event 15 (MODIFIED finalizer-kubelet)", startUp},
		{"drop pod event 16 (MODIFIED plain-kwok-v07-fast)", startUp},
		{"drop pod event 17 (MODIFIED finalizer-kwok-v08-fast)", startUp},
		{"drop pod event 18 (MODIFIED plain-kubelet)", startUp},
		{"drop pod event 19 (MODIFIED plain-faithful)", startUp},
		{"drop pod event 20 (MODIFIED plain-faithful)", startUp},
		{"drop pod event 21 (MODIFIED plain-kubelet)", startUp},
		{"drop pod event 30 (MODIFIED plain-faithful)", kwokNextShows},
		{"drop pod event 31 (MODIFIED finalizer-kwok-v07-fast)", kwokNextShows},
		{"drop pod event 33 (MODIFIED finalizer-kubelet)", kwokNextShows},
		{"drop pod event 34 (MODIFIED plain-kubelet)", kwokNextShows},
		{"drop pod event 35 (MODIFIED finalizer-faithful)", kwokNextShows},
		{"drop pod event 52 (MODIFIED plain-kubelet)", kwokNextShows},
		{"drop pod event 53 (MODIFIED finalizer-kubelet)", kwokNextShows},
		{"watch gap in the pods watch over step 0 (check kwok: a Ready controller and fake nodes, and every stage set installed)", kwokSetup},
		{"* kwok.kwok-v0.8-fast.plain.grace_collapsed_never_terminated deleted_after_seconds (*)", kwokFastDeleted},
		{"* kwok.kwok-v0.7-fast.plain.grace_collapsed_never_terminated deleted_after_seconds (*)", kwokFastDeleted},
		{"stretch ×2 kwok.kwok-v0.8-fast.finalizer.grace_collapsed_never_terminated deleted_after_seconds (*)", kwokReleasedDeleted},
		{"* kwok.kwok-v0.7-fast.finalizer.reported_bug *_after_seconds (*)", kwokStripped},
		{"action * (create *) 2s earlier", kwokCreateEarlier},
		{"action 7 (create plain-kubelet) earlier: its distance to what follows ×2", kwokCreateEarlier},
		{"action * (force-delete *) 2s *", kwokForceMoved},
		{"action 18 (force-delete finalizer-faithful) * its distance to what follows *", kwokForceMoved},
		{"action * (remove-finalizers *) 2s earlier", kwokReleaseEarlier},
		{"action 21 (remove-finalizers finalizer-kwok-v08-fast) * its distance to what follows *", kwokReleaseEarlier},
	},
	"graceful": {
		{"watch gap in the events watch *", gapKubeEvents},
		{"watch gap in the nodes watch *", noNodes},
		{"drop node event *", noNodes},
		{"watch gap in the pods watch *", gracefulPodsGap},
		{"drop pod event * (MODIFIED *)", gracefulPodEvents},
		{"drop pod event * (DELETED *)", gracefulPodEvents},
		{"flip state pod event *", gracefulPodEvents},
		{"flip state crictl look * CONTAINER_EXITED→CONTAINER_RUNNING", gracefulTaskExit},
		{"drop endpointslice event 5 (*)", gracefulSliceBefore},
		{"drop endpointslice event 7 (*)", gracefulSliceBefore},
		{"drop endpointslice event 8 (*)", gracefulSliceBefore},
		{"drop endpointslice event 10 (*)", gracefulSliceBefore},
		{"drop endpointslice event 11 (*)", gracefulSliceBefore},
		{"drop endpointslice event 12 (*)", gracefulSliceBefore},
		{"drop endpointslice event 14 (*)", gracefulSliceBefore},
		{"drop endpointslice event 20 (*)", gracefulSliceRemoved},
		{"drop endpointslice event 22 (*)", gracefulSliceRemoved},
		{"drop endpointslice event 23 (*)", gracefulSliceRemoved},
		{"flip state request 586 (exit-now seq 331) refused→ok", gracefulOneFailure},
		{"task exit *", gracefulTaskExitRead},
		{"proxy read 1 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 2 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 3 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 4 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 5 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 6 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 7 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 8 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 9 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 10 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 11 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 12 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 13 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 14 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 15 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 16 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 17 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 18 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 19 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 20 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read 21 (termlab-worker2) dropped", gracefulProxyLater},
		{"proxy read * (termlab-worker2) still forwards *", gracefulProxyLater},
		{"action * (create-service *) *", createUnread},
		{"action 5 (create steady) later: its distance to what follows ×0.5", createUnread},
		{"action 6 (create exit-now) later: its distance to what follows ×0.5", createUnread},
		{"action 7 (create exec-sleep) later: its distance to what follows ×0.5", createUnread},
		{"action 8 (create native-sleep) later: its distance to what follows ×0.5", createUnread},
		{"action 9 (create ignore-term) later: its distance to what follows ×0.5", createUnread},
		{"action * (create *) dropped", createUnread},
		{"action * (create *) *earlier*", createUnread},
		{"* graceful.endpoint_terminating *_terminating_after_seconds (*)", gracefulTerminating},
		{"stretch ×2 graceful.client_node_stops_forwarding *_propagation_seconds (*)", gracefulPropagation},
		{"* graceful.sigterm_after_prestop exec_sigterm_after_prestop_end_seconds (*)", gracefulHookReturn},
		{"shrink ×0.5 graceful.sigterm_after_prestop exec_prestop_started_after_delete_seconds (*)", gracefulHookStart},
		{"action * (delete *) dropped", gracefulDeleteFromWatch},
		{"action 12 (delete exec-sleep) earlier: its distance to what follows ×2", gracefulDeleteNudged},
		{"action 13 (delete native-sleep) earlier: its distance to what follows ×2", gracefulDeleteNudged},
		{"action 14 (delete ignore-term) earlier: its distance to what follows ×2", gracefulDeleteNudged},
		{"action 15 (delete prestop-overrun) earlier: its distance to what follows ×2", gracefulDeleteNudged},
		{"action 12 (delete exec-sleep) later: its distance to what follows ×0.5", gracefulDeleteNudged},
		{"action 13 (delete native-sleep) later: its distance to what follows ×0.5", gracefulDeleteNudged},
		{"action 14 (delete ignore-term) later: its distance to what follows ×0.5", gracefulDeleteNudged},
		{"action 15 (delete prestop-overrun) later: its distance to what follows ×0.5", gracefulDeleteNudged},
		{"action 13 (delete native-sleep) 2s earlier", gracefulDelete2sEarlier},
		{"action 14 (delete ignore-term) 2s earlier", gracefulDelete2sEarlier},
		{"action 16 (delete exit-now) 2s earlier", gracefulDelete2sEarlier},
		{"* graceful.prestop_sleep_loses_nothing *_longest_request_gap_seconds (*)", gracefulRequestGap},
		{"shrink ×0.5 graceful.prestop_counts_against_grace prestop_started_after_delete_seconds (*)", gracefulOverrunPreStop},
		{"shrink ×0.5 graceful.client_node_stops_forwarding exec-sleep_propagation_seconds (*)", gracefulFasterProxy},
		{"shrink ×0.5 graceful.no_prestop_requests_fail_in_window sigterm_after_delete_seconds (*)", gracefulExitNowSigterm},
		{"shrink ×0.5 graceful.sigkill_at_grace_end ignore-term_sigterm_after_delete_seconds (*)", gracefulIgnoreSigterm},
	},
	"namespace": {
		{"watch gap in the events watch *", nsKubeEvents},
		{"watch gap in the nodes watch *", noNodes},
		{"drop node event *", noNodes},
		{"drop namespace event 3 (MODIFIED *-apiservice)", nsDeleteSeen},
		{"drop namespace event 7 (MODIFIED *-orphan)", nsDeleteSeen},
		{"drop namespace event 11 (MODIFIED *)", nsDeleteSeen},
		{"drop pod event 1 (MODIFIED user)", nsPodStart},
		{"drop pod event 2 (MODIFIED user)", nsPodStart},
		{"drop pod event 5 (MODIFIED user)", nsPodRepeat},
		{"drop pod event 7 (MODIFIED user)", nsPodExitAgain},
		{"drop pod event 8 (MODIFIED user)", nsPodExitAgain},
		{"flip state pod event 7 (MODIFIED user) container heartbeat terminated→running", nsPodExitAgain},
		{"watch gap in the pods watch over step 0 *", nsPodsBefore},
		{"watch gap in the pods watch over step 1 *", nsPodsBefore},
		{"watch gap in the pods watch over step 2 *", nsPodsBefore},
		{"watch gap in the pods watch over step 3 *", nsPodsBefore},
		{"watch gap in the pods watch over step 4 *", nsPodsBefore},
		{"watch gap in the pods watch over step 8 (cleanup)", nsPodsBefore},
		{"watch gap in the namespaces watch over step 0 *", nsNamespacesQuiet},
		{"watch gap in the namespaces watch over step 5 *", nsNamespacesQuiet},
		{"watch gap in the namespaces watch over step 8 (cleanup)", nsNamespacesQuiet},
	},
	"sidecar": {
		{"watch gap in the events watch *", gapKubeEvents},
		{"watch gap in the nodes watch *", noNodes},
		{"drop node event *", noNodes},
		{"watch gap in the pods watch *", sidecarPodEvents},
		{"drop pod event * (MODIFIED *)", sidecarPodEvents},
		{"drop pod event * (DELETED *)", sidecarPodEvents},
		{"flip state pod event *", sidecarPodEvents},
		{"drop kube event * (Scheduled *)", sidecarKubeEvents},
		{"drop kube event * (Pulled *)", sidecarKubeEvents},
		{"drop kube event * (Created *)", sidecarKubeEvents},
		{"drop kube event * (Started *)", sidecarKubeEvents},
		{"drop kube event * (Killing Pod/sidecars-overrun)", sidecarKubeEvents},
		{"flip state crictl look 1 (* step \"create pods *\") CONTAINER_RUNNING→CONTAINER_EXITED", creationLook},
		{"flip state crictl look 2 (* step \"create pods *\") CONTAINER_RUNNING→CONTAINER_EXITED", creationLook},
		{"flip state crictl look 3 (* step \"create pods *\") CONTAINER_RUNNING→CONTAINER_EXITED", creationLook},
		{"flip state crictl look 4 (* step \"create pods *\") CONTAINER_RUNNING→CONTAINER_EXITED", creationLook},
		{"flip state crictl look 5 (* step \"create pods *\") CONTAINER_RUNNING→CONTAINER_EXITED", creationLook},
		{"flip state crictl look 6 (sidecars, step \"wait for every container to stop\") CONTAINER_EXITED→CONTAINER_RUNNING", sidecarOtherLook},
		{"flip state crictl look 8 (sidecars, step \"wait for every container to stop\") CONTAINER_EXITED→CONTAINER_RUNNING", sidecarOtherLook},
		{"flip state crictl look 9 (sidecars-overrun, step \"wait for every container to stop\") CONTAINER_EXITED→CONTAINER_RUNNING", sidecarOtherLook},
		{"flip state crictl look 11 (sidecars-overrun, step \"wait for every container to stop\") CONTAINER_EXITED→CONTAINER_RUNNING", sidecarOtherLook},
		{"action 0 (create sidecars) later: its distance to what follows ×0.5", createUnread},
		{"action * (create *) dropped", createUnread},
		{"action * (create *) *earlier*", createUnread},
		{"stretch ×2 sidecar.overrun_sidecars_ended_right_after sidecar_*_ended_after_*_seconds (*)", sidecarEndedInside},
		{"shrink ×0.5 sidecar.overrun_sidecars_ended_right_after sidecar_*_ended_after_*_seconds (*)", sidecarExitTooSoon},
		{"* sidecar.overrun_sidecars_ended_right_after sidecars_sigterm_apart_seconds (*)", sidecarTogether},
		{"* sidecar.reverse_start_order main_started_after_sidecar_b_seconds (*)", sidecarStartsOrder},
		{"shrink ×0.5 sidecar.reverse_start_order sidecar_b_started_after_sidecar_a_seconds (*)", sidecarStartsOrder},
		{"* sidecar.prestop_with_main *_stopping_after_delete_seconds (*)", sidecarKillingEvents},
		{"* sidecar.prestop_with_main main_sigterm_after_stopping_seconds (*)", sidecarMainSigterm},
		{"stretch ×2 sidecar.sidecars_after_main main_sigterm_after_delete_seconds (*)", sidecarMainSigterm},
		{"stretch ×2 sidecar.sidecars_after_main sidecar_a_exit_after_delete_seconds (*)", sidecarAExitLater},
		{"stretch ×2 sidecar.overrun_main_killed_at_grace_end main_sigterm_after_delete_seconds (*)", sidecarOverrunSigterm},
		{"action 2 (delete sidecars) 2s earlier", sidecarDeleteMoved},
		{"action 2 (delete sidecars) * its distance to what follows *", sidecarDeleteMoved},
		{"action 3 (delete sidecars-overrun) 2s earlier", sidecarDeleteMoved},
	},
	"scale": {
		{"watch gap in the events watch *", gapKubeEvents},
		{"watch gap in the nodes watch over step *(cleanup)", cleanup},
		{"watch gap in the nodes watch *", noNodes},
		{"drop node event *", noNodes},
		{"drop kube event *", scaleKubeEvents},
		{"drop pod event 62 (MODIFIED scale-00002)", scaleStartUp},
		{"drop pod event 87 (MODIFIED scale-00013)", scaleStartUp},
		{"drop pod event 100 (MODIFIED scale-00035)", scaleStartUp},
		{"drop pod event 112 (MODIFIED scale-00044)", scaleStartUp},
		{"drop pod event 125 (MODIFIED scale-00000)", scaleStartUp},
		{"drop pod event 175 (MODIFIED scale-00076)", scaleStartUp},
		{"drop pod event 187 (MODIFIED scale-00080)", scaleStartUp},
		{"drop pod event 200 (MODIFIED scale-00094)", scaleStartUp},
		{"drop pod event 212 (MODIFIED scale-00011)", scaleStartUp},
		{"drop pod event 225 (MODIFIED scale-00014)", scaleStartUp},
		{"drop pod event 237 (MODIFIED scale-00040)", scaleStartUp},
		{"drop pod event 250 (MODIFIED scale-00046)", scaleStartUp},
		{"drop pod event 263 (MODIFIED scale-00051)", scaleStartUp},
		{"drop pod event 275 (MODIFIED scale-00071)", scaleStartUp},
		{"drop pod event 288 (MODIFIED scale-00090)", scaleStartUp},
		{"drop pod event 400 (MODIFIED scale-00000)", scaleTransitions},
		{"drop pod event 413 (MODIFIED scale-00005)", scaleTransitions},
		{"drop pod event 425 (MODIFIED scale-00008)", scaleTransitions},
		{"drop pod event 438 (MODIFIED scale-00014)", scaleTransitions},
		{"drop pod event 450 (MODIFIED scale-00019)", scaleTransitions},
		{"drop pod event 463 (MODIFIED scale-00017)", scaleTransitions},
		{"drop pod event 488 (MODIFIED scale-00033)", scaleTransitions},
		{"drop pod event 513 (MODIFIED scale-00028)", scaleTransitions},
		{"drop pod event 526 (MODIFIED scale-00046)", scaleTransitions},
		{"drop pod event 538 (MODIFIED scale-00039)", scaleTransitions},
		{"drop pod event 551 (MODIFIED scale-00056)", scaleTransitions},
		{"drop pod event 563 (MODIFIED scale-00062)", scaleTransitions},
		{"drop pod event 576 (MODIFIED scale-00068)", scaleTransitions},
		{"drop pod event 588 (MODIFIED scale-00078)", scaleTransitions},
		{"drop pod event 601 (MODIFIED scale-00035)", scaleTransitions},
		{"drop pod event 626 (MODIFIED scale-00054)", scaleTransitions},
		{"drop pod event 638 (MODIFIED scale-00060)", scaleTransitions},
		{"drop pod event 651 (MODIFIED scale-00067)", scaleTransitions},
		{"drop pod event 663 (MODIFIED scale-00076)", scaleTransitions},
		{"drop pod event 688 (MODIFIED scale-00092)", scaleTransitions},
		{"drop pod event 701 (MODIFIED scale-00058)", scaleTransitions},
		{"drop pod event 726 (MODIFIED scale-00070)", scaleTransitions},
		{"drop pod event 738 (MODIFIED scale-00076)", scaleTransitions},
		{"drop pod event 776 (MODIFIED scale-00099)", scaleTransitions},
		{"flip state pod event 402 (MODIFIED scale-00000) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 406 (MODIFIED scale-00002) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 417 (MODIFIED scale-00004) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 424 (MODIFIED scale-00007) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 440 (MODIFIED scale-00010) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 446 (MODIFIED scale-00012) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 458 (MODIFIED scale-00015) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 463 (MODIFIED scale-00017) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 468 (MODIFIED scale-00020) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 471 (MODIFIED scale-00023) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 493 (MODIFIED scale-00025) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 509 (MODIFIED scale-00027) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 516 (MODIFIED scale-00030) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 521 (MODIFIED scale-00033) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 529 (MODIFIED scale-00035) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 534 (MODIFIED scale-00037) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 541 (MODIFIED scale-00040) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 546 (MODIFIED scale-00042) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 573 (MODIFIED scale-00045) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 594 (MODIFIED scale-00047) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 604 (MODIFIED scale-00050) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 615 (MODIFIED scale-00052) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 630 (MODIFIED scale-00055) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 634 (MODIFIED scale-00058) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 638 (MODIFIED scale-00060) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 641 (MODIFIED scale-00062) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 644 (MODIFIED scale-00065) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 649 (MODIFIED scale-00068) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 654 (MODIFIED scale-00070) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 656 (MODIFIED scale-00074) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 659 (MODIFIED scale-00075) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 661 (MODIFIED scale-00079) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 664 (MODIFIED scale-00080) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 666 (MODIFIED scale-00082) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 670 (MODIFIED scale-00085) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 678 (MODIFIED scale-00087) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 685 (MODIFIED scale-00090) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 688 (MODIFIED scale-00092) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 692 (MODIFIED scale-00095) container heartbeat terminated→running", scaleTransitions},
		{"flip state pod event 695 (MODIFIED scale-00097) container heartbeat terminated→running", scaleTransitions},
		{"stretch ×2 scale.every_pod_deleted delete_to_last_deleted_seconds (*)", scaleFigureOnly},
		{"* scale.finalizers_held_until_released release_to_deleted_max_seconds (*)", scaleReleaseUnbounded},
		{"action 2 (delete-namespace *) 2s later", scaleMarkedAfterDelete},
		{"action 2 (delete-namespace *) later: its distance to what follows ×0.5", scaleMarkedAfterDelete},
		{"action 0 (create-nodes *) *", scaleCreatesUnread},
		{"action 1 (create-pods *) *", scaleCreatesUnread},
		{"action 3 (remove-finalizers *) 2s earlier", scaleReleaseUnbounded},
		{"action 4 (remove-finalizers *) 2s earlier", scaleReleaseUnbounded},
		{"action 5 (remove-finalizers *) 2s earlier", scaleReleaseUnbounded},
		{"action 6 (remove-finalizers *) 2s earlier", scaleReleaseUnbounded},
		{"action 7 (remove-finalizers *) 2s earlier", scaleReleaseUnbounded},
		{"action 8 (remove-finalizers *) 2s earlier", scaleReleaseUnbounded},
		{"action 9 (remove-finalizers *) 2s earlier", scaleReleaseUnbounded},
		{"action 10 (remove-finalizers *) 2s earlier", scaleReleaseUnbounded},
		{"action 12 (remove-finalizers *) 2s earlier", scaleReleaseUnbounded},
		{"action 13 (remove-finalizers *) 2s earlier", scaleReleaseUnbounded},
		{"action 14 (remove-finalizers *) 2s earlier", scaleReleaseUnbounded},
		{"action 15 (remove-finalizers *) 2s earlier", scaleReleaseUnbounded},
		{"action 16 (remove-finalizers *) 2s earlier", scaleReleaseUnbounded},
		{"action 17 (remove-finalizers *) 2s earlier", scaleReleaseUnbounded},
		{"action 18 (remove-finalizers *) 2s earlier", scaleReleaseUnbounded},
		{"action 19 (remove-finalizers *) 2s earlier", scaleReleaseUnbounded},
		{"action 20 (remove-finalizers *) 2s earlier", scaleReleaseUnbounded},
		{"action 21 (remove-finalizers *) 2s earlier", scaleReleaseUnbounded},
		{"action 22 (remove-finalizers *) *earlier*", scaleReleaseUnbounded},
		{"action 23 (delete-nodes *) *", scaleNodesDeleteUnread},
	},
}

// lab:stuck's reasons for #44 item 3's operators (its actions, its audit
// log, its untolerated timings), read against
// labs/stuck/testdata/20261204-023938-30a1.
const (
	stuckMarkedSooner      = "reviewed: stays_terminating bounds the deletionTimestamp's arrival in the watch above only, within 1 s of the delete request (claims.WatchAllowance: the API server writes it before it answers): 0.028 s ×2 stays far inside, and ×0.5 (0.014 s, still after the request, from which the claim looks for it) is a faster watch, which contradicts nothing it states"
	stuckKilledSooner      = "reviewed: container_stopped_after_kubelet_restart bounds the kill after the kubelet's start above only (4.5 s: its first housekeeping, every 2 s, can come as soon as it runs) and requires it after the start; halved, or with the start moved 2 s later or halfway to what follows, the kill comes 1.26–2.06 s after the start, still after it: a faster kubelet, which contradicts nothing it states (stopped_after_deleted_seconds is observed, not bounded)"
	stuckCreateClock       = "reviewed: besides watch_order's check that the pod is first seen after its create was sent (which a create dropped, or moved earlier, leaves holding), lab:stuck's claims read the create only through the API server's clock: it and the delete are the two probes of evidence.APIServerOffset (-0.040 s ± 0.042 s here). Without the create's probe (action dropped, its audit entry dropped or not a person's) the delete alone measures it (-0.054 s ± 0.060 s); with its audit entry made a second delete, neither probe is left and the API server's clock is taken as the host's, which it is on a kind cluster reached by docker exec (evidence.Record.SharesHostClock; measured here 0.040 s off); moved earlier, or its audit entry 2 s later, the probes disagree and the offset spans them both (its uncertainty up to ±1.85 s). Every interval read on that clock keeps its verdict: the grace deadline to the taint (41.2 s, against the 15 s termlab arranges) and pod_gc_deleted_by's requests before the watch events they cause, where a wider uncertainty only widens what counts as after"
	stuckStopMoved         = "reviewed: node_not_ready and node_unreachable_taint time the kubelet stop (NotReady 49.9 s, the taint 50.1 s after it): moved 2 s either way they stay inside 39.6–65 s and 39.6–70 s, what the node controller's grace period and period allow (and node_not_ready's tolerance, ±25.4 s); its distance to the delete, from its end, is 2 ms, so ×2 or ×0.5 of it moves nothing measurable. stays_terminating and pod_gc_deleted only need it before the delete and the DELETED (kubelet_stopped_since is observed)"
	stuckTaintLater        = "reviewed: the pod GC runs every 20 s, unsynchronised with the taint, so its Failed and DELETED may follow the taint by anything from 0 to 25 s (pod_gc_deleted bounds them above and orders them after it): moved 2 s later, or halfway to the untaint (8.9 s), the taint still precedes them (the DELETED 14.2 s and 7.4 s after it), and the hold before it that stays_terminating arranges only grows. Its audit entry then lies outside the request's window and the action stands on termlab's own record, which the claims say (taint_node_source)"
	stuckUntaint           = "reviewed: no claim reads the taint's removal, termlab's cleanup of its out-of-service taint before the kubelet's start (nor its audit entry, which AuditFor passes over for the taint's own, nearer one): the claims' windows end at the DELETED and at the kubelet's start, its own action"
	stuckStartUpAudit      = "reviewed: the pod's start-up as the API server logged it (the scheduler's binding, the kubelet's status patches): no claim reads who started the pod, and pod_gc_deleted_by needs the pod GC's own status write before the pod turned Failed, which is still there"
	stuckDeleteAudit       = "reviewed: termlab's delete as the API server logged it: stays_terminating checks it against the action (answered 2xx, a grace period, not 0) where the log has it, and it probes the API server's clock with the create; dropped, not a person's, or not a delete, the action stands on termlab's own record and the claim says so (delete_source), while the delete's effect is read from the watch itself (its deletionTimestamp 0.028 s after the request, grace 30); moved 2 s later, the clock's probes disagree, the offset spans both and the entry still matches inside the widened slack"
	stuckTaintAudit        = "reviewed: termlab's taint as the API server logged it: stays_terminating and pod_gc_deleted check it only for a 2xx answer (audited); dropped, not a person's, not an update or 2 s away, the taint stands on termlab's own record and the claims say so (taint_node_source). Taint and untaint are two updates of one node, so neither probes the API server's clock"
	stuckNodeTaintsAudit   = "reviewed: the node lifecycle controller's patches of the node (the unreachable taints) as logged: node_unreachable_taint reads the taint from the node watch (0.04 s after the NoExecute patch was received here); no claim reads who wrote it"
	stuckNodeControllerPod = "reviewed: the node lifecycle controller's writes of the pod as logged (its Ready=False status at NotReady; the out-of-service taint's eviction, TaintManagerEviction: a status patch and a graceful delete, grace 30, that only marks the pod again): stays_terminating reads the pod's state from the watch, pod_gc_deleted_by only the request that removed the pod (the object gone, not marked) and a status write of the pod GC's before the pod turned Failed, which any other writer's beside it leaves standing"
)
