package recorder

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/termlab/termlab/internal/evidence"
)

// The recorder alone, against a local API server (httptest) that streams a
// pod watch as fast as the connection takes it: what recording costs apart
// from the cluster. Each iteration records benchEvents pod events shaped like
// lab:scale's (about 5 KB of JSON each, managedFields included) through
// client-go, the HTTP stream, the decoder and the recorder, until
// WaitEvents has seen the last one; the server's encoding is done before the
// timer starts. It reports events/s, bytes written per event and the heap
// the record holds at the end (after a GC).
//
//	go test -run=^$ -bench=Recorder -benchtime=5x ./internal/recorder/
const benchEvents = 20000

func BenchmarkRecorderJSON(b *testing.B)     { benchRecorder(b, k8sruntime.ContentTypeJSON) }
func BenchmarkRecorderProtobuf(b *testing.B) { benchRecorder(b, k8sruntime.ContentTypeProtobuf) }

func benchRecorder(b *testing.B, mediaType string) {
	stream := encodeWatch(b, mediaType, benchEvents)
	srv := httptest.NewServer(watchServer(mediaType, stream))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: mediaType, AcceptContentTypes: mediaType}, QPS: 1000, Burst: 1000}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	var written int64
	var heap uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		r, err := Start(ctx, Config{Client: client, Lab: "bench", RunID: "b", Namespace: "ns", PodSelector: "run=b", Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		if err := r.WaitEvents(ctx, "every streamed event", func(evidence.PodEvent) bool { n++; return n == benchEvents }); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		runtime.GC() // what the record keeps, not garbage
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		heap = max(heap, m.HeapAlloc)
		if gaps := r.Record().Gaps; len(gaps) > 0 {
			b.Fatalf("the recorder saw watch gaps against a local server: %+v", gaps)
		}
		cancel()
		if err := r.Stop(); err != nil {
			b.Fatal(err)
		}
		st, err := os.Stat(filepath.Join(dir, evidence.EventsFile))
		if err != nil {
			b.Fatal(err)
		}
		written = st.Size()
		b.StartTimer()
	}
	b.StopTimer()
	perOp := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(benchEvents)/perOp, "events/s")
	b.ReportMetric(float64(written)/benchEvents, "bytes-written/event")
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
}

// benchPod is a pod as lab:scale's watch shows it once Running on a fake node.
func benchPod(i int) *corev1.Pod {
	t := metav1.NewTime(time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC))
	grace := int64(30)
	name := fmt.Sprintf("scale-%05d", i)
	fields := func(s string) *metav1.FieldsV1 { return &metav1.FieldsV1{Raw: []byte(s)} }
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "ns", UID: types.UID(fmt.Sprintf("0000%04d-5b79-4491-b0ab-73014ac1751f", i%10000)),
			ResourceVersion: fmt.Sprint(1000 + i), Generation: 1, CreationTimestamp: t,
			Labels:      map[string]string{"run": "b", "app.kubernetes.io/name": "scale", "termlab.dev/lab": "scale", "termlab.dev/run-id": "20261203-093717-9b19", "termlab.dev/stage-set": "faithful"},
			Annotations: map[string]string{"termlab.dev/sigterm-exit-after-seconds": "0"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "termlab", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &t, FieldsType: "FieldsV1",
					FieldsV1: fields(`{"f:metadata":{"f:annotations":{".":{},"f:termlab.dev/sigterm-exit-after-seconds":{}},"f:labels":{".":{},"f:app.kubernetes.io/name":{},"f:termlab.dev/lab":{},"f:termlab.dev/run-id":{},"f:termlab.dev/stage-set":{}}},"f:spec":{"f:automountServiceAccountToken":{},"f:containers":{"k:{\"name\":\"heartbeat\"}":{".":{},"f:args":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:nodeSelector":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{},"f:tolerations":{}}}`)},
				{Manager: "kwok", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &t, FieldsType: "FieldsV1", Subresource: "status",
					FieldsV1: fields(`{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{},"f:startTime":{}}}`)},
			},
		},
		Spec: corev1.PodSpec{
			NodeName: "scale-20261203-093717-9b19-003", RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: &grace,
			NodeSelector: map[string]string{"termlab.dev/run-id": "20261203-093717-9b19"},
			Tolerations: []corev1.Toleration{
				{Key: "kwok.x-k8s.io/node", Operator: corev1.TolerationOpEqual, Value: "fake", Effect: corev1.TaintEffectNoSchedule},
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &grace},
			},
			Containers: []corev1.Container{{Name: "heartbeat", Image: "termlab.local/heartbeat:dev", Args: []string{"--interval=1s", "--term-delay=0s"},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, HostIP: "172.18.0.9", PodIP: "10.0.3.17", StartTime: &t,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: t},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: t},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: t},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: t},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "heartbeat", Ready: true, Image: "termlab.local/heartbeat:dev",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t}}}},
		},
	}
}

// encodeWatch renders a watch stream of n ADDED events as the API server sends it.
func encodeWatch(b *testing.B, mediaType string, n int) []byte {
	info, ok := k8sruntime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mediaType)
	if !ok || info.StreamSerializer == nil {
		b.Fatalf("no stream serializer for %s", mediaType)
	}
	objEnc := scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)
	evEnc := scheme.Codecs.EncoderForVersion(info.StreamSerializer.Serializer, corev1.SchemeGroupVersion)
	var buf bytes.Buffer
	enc := streaming.NewEncoder(info.StreamSerializer.Framer.NewFrameWriter(&buf), evEnc)
	for i := 0; i < n; i++ {
		raw, err := k8sruntime.Encode(objEnc, benchPod(i))
		if err != nil {
			b.Fatal(err)
		}
		if err := enc.Encode(&metav1.WatchEvent{Type: "ADDED", Object: k8sruntime.RawExtension{Raw: raw}}); err != nil {
			b.Fatal(err)
		}
	}
	return buf.Bytes()
}

// watchServer answers the recorder's LISTs empty and its pod watch with the
// stream, then holds it open; the events and nodes watches stay quiet.
func watchServer(mediaType string, stream []byte) http.Handler {
	emptyList := func(kind string) []byte {
		var l k8sruntime.Object
		switch kind {
		case "pods":
			l = &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
		case "events":
			l = &corev1.EventList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
		default:
			l = &corev1.NodeList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
		}
		info, _ := k8sruntime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mediaType)
		raw, _ := k8sruntime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion), l)
		return raw
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		kind := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
		if req.URL.Query().Get("watch") != "true" {
			w.Header().Set("Content-Type", mediaType)
			_, _ = w.Write(emptyList(kind))
			return
		}
		w.Header().Set("Content-Type", mediaType+";stream=watch")
		w.WriteHeader(http.StatusOK)
		if kind == "pods" {
			const chunk = 64 << 10
			for off := 0; off < len(stream); off += chunk {
				if _, err := w.Write(stream[off:min(off+chunk, len(stream))]); err != nil {
					return
				}
			}
		}
		w.(http.Flusher).Flush()
		<-req.Context().Done()
	})
}
