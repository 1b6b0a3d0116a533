package diagnose

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/termlab/termlab/internal/kubelet"
	"github.com/termlab/termlab/internal/nodeunit"
)

// A pod whose containers have exited can still stay: the kubelet lets a
// pod go only once its volumes are unmounted, and an unmount fails while
// anything on the node uses the mount (a process with its working directory
// or an open file in it). The kubelet's journal says so, and when it tries
// again (its back-off: 0.5 s, doubling, at most 2 min 2 s).

// TeardownFile holds the kubelet's journal entries on the pod's volumes' unmounts.
const TeardownFile = "node/kubelet-teardown.jsonl"

// FindTeardown is the id of the volume-unmount finding.
const FindTeardown = "volume.teardown"

// journalLines bounds how much of the kubelet's journal is read: the most
// recent entries, where the back-off's failures are (one per try).
const journalLines = 5000

// TeardownCommand is how a person reads the same on the node.
const TeardownCommand = "journalctl -u kubelet -n 5000 -o json --no-pager"

// TeardownCheck is what the kubelet's journal says of the pod's volumes' unmounts.
type TeardownCheck struct {
	NodeCheck
	Entries []TeardownEntry `json:"entries,omitempty"`
}

// TeardownEntry is one unmount the kubelet logged for one of the pod's volumes.
type TeardownEntry struct {
	At time.Time `json:"at"` // the node's clock
	kubelet.Teardown
	// Message is the log entry's first line.
	Message string `json:"message"`
}

// collectTeardown reads the kubelet's journal for the pod's volumes' unmounts.
func collectTeardown(ctx context.Context, node kubelet.Node, pod *corev1.Pod) (TeardownCheck, []byte) {
	tc := TeardownCheck{NodeCheck: NodeCheck{Command: TeardownCommand}}
	var out, stderr bytes.Buffer
	cmd := node.CommandContext(ctx, "journalctl", "-u", "kubelet", "-n", strconv.Itoa(journalLines), "-o", "json", "--no-pager")
	cmd.SetStdout(&out)
	cmd.SetStderr(&stderr)
	if err := cmd.Run(); err != nil {
		tc.Err = fmt.Sprintf("on node %s: %s: %v: %s", node, TeardownCommand, err, strings.TrimSpace(stderr.String()))
		return tc, []byte(tc.Err + "\n")
	}
	// journald keeps each further line of a kubelet message (umount's
	// "target is busy") as an entry of its own: put them back together.
	type message struct {
		entry nodeunit.JournalEntry
		lines [][]byte
	}
	var messages []message
	for _, line := range bytes.Split(out.Bytes(), []byte("\n")) {
		e, err := nodeunit.ParseJournalLine(line)
		if err != nil {
			continue
		}
		if n := len(messages); n > 0 && kubelet.Continues(e.Message) {
			messages[n-1].entry.Message += "\n" + e.Message
			messages[n-1].lines = append(messages[n-1].lines, line)
			continue
		}
		messages = append(messages, message{entry: e, lines: [][]byte{line}})
	}
	var kept bytes.Buffer
	for _, m := range messages {
		t, ok := kubelet.ParseTeardown(m.entry.Message)
		if !ok || !strings.Contains(t.Volume, "/"+string(pod.UID)+"-") {
			continue
		}
		tc.Entries = append(tc.Entries, TeardownEntry{At: m.entry.At, Teardown: t, Message: summary(m.entry.Message)})
		for _, l := range m.lines {
			kept.Write(l)
			kept.WriteByte('\n')
		}
	}
	tc.Output = fmt.Sprintf("%d entries on the pod's volumes", len(tc.Entries))
	return tc, kept.Bytes()
}

// summary is a kubelet message as a finding quotes it: umount's own words
// where the message carries them ("umount: <path>: target is busy."), or
// its error, on one line.
func summary(msg string) string {
	if i := strings.LastIndex(msg, "Output: "); i >= 0 {
		return strings.Join(strings.Fields(msg[i+len("Output: "):]), " ")
	}
	if _, rest, ok := strings.Cut(msg, "Error: "); ok {
		msg = rest
	}
	return strings.Join(strings.Fields(msg), " ")
}

// busyVolume is a volume of the pod whose last logged unmount failed because
// the mount was busy.
type busyVolume struct {
	name, path      string
	failures        int
	first, last     time.Time
	retryAt         time.Time
	backoff, detail string
}

// busyVolumes are the pod's volumes whose unmount last failed with the
// mount busy, by name.
func busyVolumes(c Collected, f *podFacts) []busyVolume {
	byVolume := map[string]*busyVolume{}
	var names []string
	for _, e := range c.Teardown.Entries {
		name := strings.TrimPrefix(path.Base(e.Volume), string(f.pod.UID)+"-")
		b, ok := byVolume[name]
		if !ok {
			b = &busyVolume{name: name, path: volumePath(f.pod, e.Volume, name)}
			byVolume[name] = b
			names = append(names, name)
		}
		if !e.Failed {
			*b = busyVolume{name: name, path: b.path} // unmounted: what came before is over
			continue
		}
		if !e.Busy {
			continue
		}
		if b.failures == 0 {
			b.first = e.At
		}
		b.failures++
		b.last, b.retryAt, b.backoff, b.detail = e.At, e.RetryAt, e.Backoff, e.Message
	}
	sort.Strings(names)
	var out []busyVolume
	for _, n := range names {
		if byVolume[n].failures > 0 {
			out = append(out, *byVolume[n])
		}
	}
	return out
}

// volumePath is where the kubelet mounts the volume on the node
// (<root>/pods/<uid>/volumes/<plugin with ~>/<name>; the default root).
func volumePath(p *corev1.Pod, unique, name string) string {
	plugin := strings.ReplaceAll(path.Dir(unique), "/", "~")
	return path.Join("/var/lib/kubelet/pods", string(p.UID), "volumes", plugin, name)
}

// teardownFindings: the volumes whose unmount fails because they are busy.
func teardownFindings(f *podFacts) []Finding {
	if !f.deleting || (f.c.Teardown.Command == "" && f.c.Teardown.NotChecked == "") {
		return nil
	}
	ev := []string{TeardownFile}
	tc := f.c.Teardown
	switch {
	case tc.NotChecked != "":
		return []Finding{{ID: FindTeardown, Level: NotChecked, Verdict: "not checked", Evidence: ev,
			Text: "Whether the kubelet can unmount the pod's volumes was not checked: " + tc.NotChecked + "."}}
	case tc.Err != "":
		return []Finding{{ID: FindTeardown, Level: NotChecked, Verdict: "not checked", Evidence: ev,
			Text: "The kubelet's journal could not be read: " + tc.Err + "."}}
	}
	busy := f.busy
	if len(busy) == 0 {
		return []Finding{{ID: FindTeardown, Level: Info, Verdict: "none busy", Evidence: ev,
			Text: fmt.Sprintf("The kubelet's journal (its last %d entries) shows no failing unmount of the pod's volumes.", journalLines)}}
	}
	var out []Finding
	for _, b := range busy {
		out = append(out, Finding{ID: FindTeardown, Level: Blocking, Verdict: "busy", Evidence: ev,
			Text: fmt.Sprintf("%sthe kubelet cannot unmount volume %s (%s): busy — %s in its journal since %s, the last at %s; it tries again at %s (back-off %s). The kubelet's last word: %s",
				exitedPrefix(f), b.name, b.path, count(b.failures, "failed unmount", "failed unmounts"), b.first.Format(time.RFC3339), b.last.Format(time.RFC3339), b.retryAt.Format(time.RFC3339), b.backoff, b.detail)})
	}
	return out
}

// exitedPrefix says the containers exited, when crictl said so.
func exitedPrefix(f *podFacts) string {
	if len(f.exited) > 0 && len(f.running) == 0 && len(f.unseen) == 0 {
		return "Its containers exited, yet "
	}
	return ""
}

// volumeBusy: an unmount of the pod's volumes last failed with the mount busy.
func volumeBusy(f *podFacts) bool { return f.deleting && len(f.busy) > 0 }

func volumeBusyAnswer(f *podFacts) []string {
	var names []string
	for _, b := range f.busy {
		names = append(names, b.name)
	}
	return one(fmt.Sprintf("The kubelet cannot unmount volume %s: the mount is busy (something on %s uses it). The kubelet lets a pod go only once its volumes are unmounted, so the object stays as long as the mount is busy.", strings.Join(names, ", "), f.node))
}

func volumeBusyAdvice(f *podFacts) []string {
	var out []string
	for _, b := range f.busy {
		out = append(out, fmt.Sprintf("find and end what keeps %s busy on %s: a process with its working directory or an open file there (`ls -l /proc/*/cwd /proc/*/fd 2>/dev/null | grep %s` on the node), or a mount namespace that still holds it (`grep -l %s /proc/*/mountinfo`). The kubelet's next try (at %s; its back-off grows to at most 2 min 2 s) unmounts it and the pod goes.",
			b.path, f.node, f.pod.UID, b.path, b.retryAt.Format(time.RFC3339)))
	}
	return out
}
