package kubelet

import (
	"testing"
	"time"
)

// A failure as the kubelet v1.37 logs it (nestedpendingoperations.go), and its success.
const (
	failedMsg = `Operation for "{volumeName:kubernetes.io/empty-dir/3f1c-scratch podName:3f1c nodeName:}" failed. No retries permitted until 2026-12-04 14:01:02.5 +0000 UTC m=+812.1 (durationBeforeRetry 4s). Error: UnmountVolume.TearDown failed for volume "kubernetes.io/empty-dir/3f1c-scratch" (UniqueName: "kubernetes.io/empty-dir/3f1c-scratch") pod "3f1c" (UID: "3f1c") : unmount failed: exit status 32
Unmounting arguments: /var/lib/kubelet/pods/3f1c/volumes/kubernetes.io~empty-dir/scratch
Output: umount: /var/lib/kubelet/pods/3f1c/volumes/kubernetes.io~empty-dir/scratch: target is busy.`
	succeededMsg = `UnmountVolume.TearDown succeeded for volume "kubernetes.io/empty-dir/3f1c-scratch" pod "3f1c" (UID: "3f1c"). InnerVolumeSpecName "scratch". PluginName "kubernetes.io/empty-dir", VolumeGIDValue ""`
)

func TestParseTeardown(t *testing.T) {
	f, ok := ParseTeardown(failedMsg)
	want := time.Date(2026, 12, 4, 14, 1, 2, 500000000, time.UTC)
	if !ok || !f.Failed || !f.Busy || f.Volume != "kubernetes.io/empty-dir/3f1c-scratch" || !f.RetryAt.Equal(want) || f.Backoff != "4s" {
		t.Fatalf("failure: %+v, %v", f, ok)
	}
	if !VolumeOfPod(f.Volume, "3f1c", "scratch") || VolumeOfPod(f.Volume, "3f1c", "cratch") || VolumeOfPod(f.Volume, "f1c", "scratch") {
		t.Errorf("VolumeOfPod does not tell the pod's volume from others")
	}
	s, ok := ParseTeardown(succeededMsg)
	if !ok || s.Failed || s.Busy || !s.RetryAt.IsZero() {
		t.Fatalf("success: %+v, %v", s, ok)
	}
	other, ok := ParseTeardown(`UnmountVolume.TearDown failed for volume "v" : permission denied`)
	if !ok || !other.Failed || other.Busy {
		t.Errorf("a failure not of a busy mount: %+v", other)
	}
	if _, ok := ParseTeardown("MountVolume.SetUp succeeded for volume \"x\""); ok {
		t.Errorf("a mount read as a teardown")
	}
}

func TestContinues(t *testing.T) {
	if Continues(`E1204 14:10:34.203928     251 nestedpendingoperations.go:348] Operation for "{…}" failed.`) {
		t.Error("a kubelet log line read as a continuation")
	}
	for _, c := range []string{"Unmounting arguments: /var/lib/kubelet/pods/u/volumes/kubernetes.io~empty-dir/scratch", "Output: umount: /x: target is busy.", ""} {
		if !Continues(c) {
			t.Errorf("%q not read as a continuation", c)
		}
	}
}
