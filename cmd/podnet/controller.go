package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// controllerConfig is what the controller needs; newController validates it
// and fills defaults.
type controllerConfig struct {
	NodeName   string
	CNIConfDir string        // default /etc/cni/net.d
	MTU        int           // pods' MTU; required (> 0)
	Resync     time.Duration // full reconcile even without events; default 30s
	Retry      time.Duration // reconcile again this soon after an error; default 2s
	Routes     routeTable
	Log        *slog.Logger
}

type controller struct {
	conf  controllerConfig
	nodes listersv1.NodeLister

	// Last reported states, so a steady state logs nothing.
	lastState string
	lastSkips map[string]string
}

func newController(conf controllerConfig) (*controller, error) {
	if conf.NodeName == "" {
		return nil, errors.New("node name is required")
	}
	if conf.MTU <= 0 {
		return nil, errors.New("mtu is required")
	}
	if conf.Routes == nil {
		return nil, errors.New("route table is required")
	}
	if conf.CNIConfDir == "" {
		conf.CNIConfDir = "/etc/cni/net.d"
	}
	if conf.Resync <= 0 {
		conf.Resync = 30 * time.Second
	}
	if conf.Retry <= 0 {
		conf.Retry = 2 * time.Second
	}
	if conf.Log == nil {
		conf.Log = slog.Default()
	}
	return &controller{conf: conf}, nil
}

// Run watches Nodes and reconciles on every change, every Resync, and Retry
// after a failure, until ctx is done. It returns nil when ctx ends.
func (c *controller) Run(ctx context.Context, client kubernetes.Interface) error {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(stripManagedFields))
	nodes := factory.Core().V1().Nodes()
	kick := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	if _, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    poke,
		UpdateFunc: func(_, n any) { poke(n) },
		DeleteFunc: poke,
	}); err != nil {
		return err
	}
	c.nodes = nodes.Lister()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), nodes.Informer().HasSynced) {
		return nil // ctx ended first
	}
	c.conf.Log.Info("watching nodes", "node", c.conf.NodeName)

	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-kick:
		case <-timer.C:
		}
		next := c.conf.Resync
		if err := c.reconcile(); err != nil {
			c.conf.Log.Error("reconcile failed", "err", err, "retry_in", c.conf.Retry)
			next = c.conf.Retry
		}
		timer.Reset(next)
	}
}

// reconcile writes this node's CNI config once it has a podCIDR and makes the
// kernel's podnet routes match the other nodes.
func (c *controller) reconcile() error {
	all, err := c.nodes.List(labels.Everything())
	if err != nil {
		return err
	}
	var errs []error
	if err := c.ensureConfig(all); err != nil {
		errs = append(errs, err)
	}
	if err := c.ensureRoutes(all); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (c *controller) ensureConfig(all []*corev1.Node) error {
	var self *corev1.Node
	for _, n := range all {
		if n.Name == c.conf.NodeName {
			self = n
		}
	}
	switch {
	case self == nil:
		c.state("waiting for node object", "node", c.conf.NodeName)
		return nil
	case len(nodePodCIDRs(self)) == 0:
		c.state("waiting for spec.podCIDR", "node", c.conf.NodeName)
		return nil
	}
	cidrs := nodePodCIDRs(self)
	data, err := renderConflist(cidrs, c.conf.MTU)
	if err != nil {
		return fmt.Errorf("node %s: %w", self.Name, err)
	}
	path := filepath.Join(c.conf.CNIConfDir, confName)
	changed, err := writeFileIfChanged(path, data)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if changed {
		c.conf.Log.Info("wrote CNI config", "path", path, "podCIDRs", strings.Join(cidrs, ","), "mtu", c.conf.MTU)
	}
	c.state("CNI config in place", "path", path, "podCIDRs", strings.Join(cidrs, ","))
	return nil
}

// state logs msg when it differs from the last state logged.
func (c *controller) state(msg string, args ...any) {
	if s := fmt.Sprint(msg, args); s != c.lastState {
		c.lastState = s
		c.conf.Log.Info(msg, args...)
	}
}

func (c *controller) ensureRoutes(all []*corev1.Node) error {
	desired, skips := desiredRoutes(all, c.conf.NodeName)
	c.logSkips(skips)
	current, err := c.conf.Routes.List()
	if err != nil {
		return err
	}
	replace, remove := planRoutes(desired, current)
	var errs []error
	for _, r := range replace {
		if err := c.conf.Routes.Replace(r); err != nil {
			errs = append(errs, fmt.Errorf("route %s (node %s): %w", r, r.Node, err))
			continue
		}
		c.conf.Log.Info("route replaced", "node", r.Node, "dst", r.Dst, "via", r.Gw)
	}
	for _, r := range remove {
		if err := c.conf.Routes.Delete(r); err != nil {
			errs = append(errs, fmt.Errorf("deleting route %s: %w", r, err))
			continue
		}
		c.conf.Log.Info("route deleted", "dst", r.Dst, "via", r.Gw)
	}
	return errors.Join(errs...)
}

// logSkips logs each node's skip reason when it appears or changes.
func (c *controller) logSkips(skips []skip) {
	now := map[string]string{}
	for _, s := range skips {
		if now[s.Node] != "" {
			now[s.Node] += "; " + s.Reason
		} else {
			now[s.Node] = s.Reason
		}
	}
	for _, n := range slices.Sorted(maps.Keys(now)) {
		if c.lastSkips[n] != now[n] {
			c.conf.Log.Info("no route to node", "node", n, "reason", now[n])
		}
	}
	c.lastSkips = now
}

// stripManagedFields keeps the informer's cache small.
func stripManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}
