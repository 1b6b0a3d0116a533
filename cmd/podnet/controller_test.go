package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/syncbuf"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
)

// fakeRoutes is an in-memory routeTable.
type fakeRoutes struct {
	mu     sync.Mutex
	routes map[netip.Prefix]netip.Addr
}

func (f *fakeRoutes) List() ([]route, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []route
	for d, g := range f.routes {
		out = append(out, route{Dst: d, Gw: g})
	}
	return out, nil
}

func (f *fakeRoutes) Replace(r route) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.routes[r.Dst] = r.Gw
	return nil
}

func (f *fakeRoutes) Delete(r route) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.routes, r.Dst)
	return nil
}

func (f *fakeRoutes) String() string {
	rs, _ := f.List()
	var s []string
	for _, r := range rs {
		s = append(s, r.String())
	}
	slices.Sort(s)
	return strings.Join(s, ", ")
}

// TestControllerRun drives the informer loop against a fake clientset. The
// fake is fine here: podnet only reads Nodes, and deletion semantics do not
// matter for a Node it merely stops routing to.
func TestControllerRun(t *testing.T) {
	// Bounded by go test -timeout only: every wait below is for the informer
	// to catch up, which takes as long as a busy machine makes it take.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	self := node("kind-worker", internalIP("172.18.0.3")) // no podCIDR yet
	other := node("kind-worker2", podCIDRs("10.244.2.0/24"), internalIP("172.18.0.4"))
	fakeNode := node("kwok-0", podCIDRs("10.244.9.0/24"), internalIP("10.244.2.7"), label("type", "kwok"))
	client := fake.NewClientset(self, other, fakeNode)

	// A route podnet left behind before a restart, for a node that is gone.
	routes := &fakeRoutes{routes: map[netip.Prefix]netip.Addr{
		netip.MustParsePrefix("10.244.7.0/24"): netip.MustParseAddr("172.18.0.7"),
	}}
	confDir := t.TempDir()
	var logs syncbuf.Buffer
	c, err := newController(controllerConfig{
		NodeName:   self.Name,
		CNIConfDir: confDir,
		MTU:        1500,
		Routes:     routes,
		Log:        slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, client) }()

	waitRoutes := func(want string) {
		t.Helper()
		err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
			return routes.String() == want, nil
		})
		if err != nil {
			t.Fatalf("routes = %q, want %q\nlogs:\n%s", routes.String(), want, logs.String())
		}
	}
	confPath := filepath.Join(confDir, confName)

	// The stale route goes, the other real node gets one, the fake node none.
	waitRoutes("10.244.2.0/24 via 172.18.0.4")
	if _, err := os.Stat(confPath); !os.IsNotExist(err) {
		t.Fatalf("CNI config written before the node has a podCIDR: %v", err)
	}

	// The node gets its podCIDR: the config appears.
	self.Spec.PodCIDR, self.Spec.PodCIDRs = "10.244.1.0/24", []string{"10.244.1.0/24"}
	if _, err := client.CoreV1().Nodes().Update(ctx, self, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want, _ := renderConflist([]string{"10.244.1.0/24"}, 1500)
	err = wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		got, err := os.ReadFile(confPath)
		return err == nil && bytes.Equal(got, want), nil
	})
	if err != nil {
		t.Fatalf("CNI config not written: %v\nlogs:\n%s", err, logs.String())
	}

	// A node joins; then the other one is deleted.
	third := node("kind-worker3", podCIDRs("10.244.3.0/24"), internalIP("172.18.0.5"))
	if _, err := client.CoreV1().Nodes().Create(ctx, third, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRoutes("10.244.2.0/24 via 172.18.0.4, 10.244.3.0/24 via 172.18.0.5")
	if err := client.CoreV1().Nodes().Delete(ctx, other.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRoutes("10.244.3.0/24 via 172.18.0.5")

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}

	// What happened is in the logs, once each.
	out := logs.String()
	for _, s := range []string{
		`msg="waiting for spec.podCIDR" node=kind-worker`,
		`msg="wrote CNI config" path=` + confPath + ` podCIDRs=10.244.1.0/24 mtu=1500`,
		`msg="route replaced" node=kind-worker2 dst=10.244.2.0/24 via=172.18.0.4`,
		`msg="route replaced" node=kind-worker3 dst=10.244.3.0/24 via=172.18.0.5`,
		`msg="route deleted" dst=10.244.7.0/24 via=172.18.0.7`,
		`msg="route deleted" dst=10.244.2.0/24 via=172.18.0.4`,
		`msg="no route to node" node=kwok-0 reason="kwok fake node"`,
	} {
		if n := strings.Count(out, s); n != 1 {
			t.Errorf("log %q appears %d times, want once; logs:\n%s", s, n, out)
		}
	}
}

func TestNewControllerDefaults(t *testing.T) {
	c, err := newController(controllerConfig{NodeName: "n", MTU: 1500, Routes: &fakeRoutes{}})
	if err != nil {
		t.Fatal(err)
	}
	if c.conf.CNIConfDir != "/etc/cni/net.d" || c.conf.Resync != 30*time.Second || c.conf.Retry != 2*time.Second || c.conf.Log == nil {
		t.Errorf("defaults not filled: %+v", c.conf)
	}
	for _, bad := range []controllerConfig{
		{MTU: 1500, Routes: &fakeRoutes{}},
		{NodeName: "n", Routes: &fakeRoutes{}},
		{NodeName: "n", MTU: 1500},
	} {
		if _, err := newController(bad); err == nil {
			t.Errorf("newController(%+v) accepted", bad)
		}
	}
}

func TestRESTConfig(t *testing.T) {
	sa := t.TempDir()
	for _, f := range []string{"token", "ca.crt"} {
		if err := os.WriteFile(filepath.Join(sa, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct{ endpoint, wantHost string }{
		{"kind-control-plane:6443", "https://kind-control-plane:6443"},
		{"172.18.0.2:6443", "https://172.18.0.2:6443"},
		{"[fc00:f853::2]:6443", "https://[fc00:f853::2]:6443"},
		{"https://lb:6443", "https://lb:6443"},
	}
	for _, tc := range tests {
		cfg, err := restConfig(tc.endpoint, sa)
		if err != nil {
			t.Fatal(err)
		}
		want := &cfgSummary{tc.wantHost, filepath.Join(sa, "token"), filepath.Join(sa, "ca.crt")}
		if got := (&cfgSummary{cfg.Host, cfg.BearerTokenFile, cfg.CAFile}); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v, want %+v", tc.endpoint, got, want)
		}
	}
	if _, err := restConfig("kind-control-plane:6443", t.TempDir()); err == nil {
		t.Error("want an error without service account files")
	}
}

type cfgSummary struct{ Host, Token, CA string }
