package kubelet

import (
	"regexp"
	"strings"
	"time"
)

// Teardown is one of the kubelet's log entries on a volume's unmount
// (UnmountVolume.TearDown, k8s.io/kubernetes v1.37.2 operation_generator.go):
// a failure, logged by the volume manager's back-off with the time of its
// next try, or the success.
type Teardown struct {
	// Volume is the volume's unique name, e.g.
	// kubernetes.io/empty-dir/<pod uid>-scratch.
	Volume string
	Failed bool
	// Busy: the failure is umount's "target is busy" (a process uses the mount).
	Busy bool
	// RetryAt is when the kubelet permits the next try ("No retries
	// permitted until …", node clock); Backoff the wait it says.
	RetryAt time.Time
	Backoff string
}

var (
	teardownOf = regexp.MustCompile(`UnmountVolume\.TearDown (failed|succeeded) for volume "([^"]+)"`)
	retryUntil = regexp.MustCompile(`No retries permitted until (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? [+-]\d{4} [A-Z]+)`)
	backoffOf  = regexp.MustCompile(`durationBeforeRetry ([0-9.hmsµun]+)`)
)

// ParseTeardown reads a kubelet log message; ok is false for every other.
func ParseTeardown(msg string) (t Teardown, ok bool) {
	m := teardownOf.FindStringSubmatch(msg)
	if m == nil {
		return Teardown{}, false
	}
	t = Teardown{Volume: m[2], Failed: m[1] == "failed"}
	t.Busy = t.Failed && (strings.Contains(msg, "target is busy") || strings.Contains(msg, "device or resource busy"))
	if r := retryUntil.FindStringSubmatch(msg); r != nil {
		if at, err := time.Parse("2006-01-02 15:04:05.999999999 -0700 MST", r[1]); err == nil {
			t.RetryAt = at.UTC()
		}
	}
	if b := backoffOf.FindStringSubmatch(msg); b != nil {
		t.Backoff = b[1]
	}
	return t, true
}

// VolumeOfPod reports whether a unique volume name is the pod's volume of
// that name: the kubelet names a pod's non-attachable volumes
// <plugin>/<pod uid>-<volume>.
func VolumeOfPod(unique, podUID, volume string) bool {
	return strings.HasSuffix(unique, "/"+podUID+"-"+volume)
}

// klogHeader opens every line the kubelet logs (klog's text format:
// "E1204 14:10:34.203928     251 file.go:348] …"). journald keeps each
// further line of a multi-line message (umount's output, with "target is
// busy") as an entry of its own.
var klogHeader = regexp.MustCompile(`^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s`)

// Continues reports whether a journal entry of the kubelet is a further
// line of the message logged before it.
func Continues(msg string) bool { return !klogHeader.MatchString(msg) }
