// Command podnet is termlab's replacement for kind's kindnetd: a DaemonSet
// (manifests/cni/podnet.yaml) that gives each kind node pod networking.
//
// On its node it waits for spec.podCIDR and writes
// /etc/cni/net.d/10-podnet.conflist (ptp + host-local on the podCIDR +
// portmap). For every other node with a podCIDR and an InternalIP it keeps a
// kernel route "podCIDR via InternalIP", and removes the ones of deleted
// nodes. kwok's fake nodes are left alone. It exits 0 on SIGTERM or SIGINT,
// leaving config and routes in place for the pods that use them.
//
// Environment (set by the manifest):
//
//	NODE_NAME               required: this node's name (spec.nodeName)
//	CONTROL_PLANE_ENDPOINT  host:port of the API server, reachable without
//	                        kube-proxy (kind adds it); if unset, in-cluster config
//	HOST_IP, POD_SUBNET     logged only
//
// It needs hostNetwork, CAP_NET_ADMIN and write access to the CNI config dir.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	saDir        = "/var/run/secrets/kubernetes.io/serviceaccount"
	fallbackMTU  = 1500
	envNodeName  = "NODE_NAME"
	envEndpoint  = "CONTROL_PLANE_ENDPOINT"
	envHostIP    = "HOST_IP"
	envPodSubnet = "POD_SUBNET"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(log, os.Args[1:]); err != nil {
		log.Error("podnet failed", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("podnet", flag.ContinueOnError)
	confDir := fs.String("cni-conf-dir", "/etc/cni/net.d", "directory to write "+confName+" into")
	mtu := fs.Int("mtu", 0, "pods' MTU; 0 means that of the default route's interface, else 1500")
	resync := fs.Duration("resync", 30*time.Second, "reconcile this often even without node events")
	if err := fs.Parse(args); err != nil {
		return err
	}

	nodeName := os.Getenv(envNodeName)
	if nodeName == "" {
		return fmt.Errorf("%s is not set", envNodeName)
	}
	endpoint := os.Getenv(envEndpoint)
	cfg, err := restConfig(endpoint, saDir)
	if err != nil {
		return err
	}
	cfg.UserAgent = "podnet/" + nodeName
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}

	if *mtu == 0 {
		*mtu = fallbackMTU
		switch m, err := defaultRouteMTU(); {
		case err != nil:
			log.Warn("no MTU from the default route; using the fallback", "err", err, "mtu", fallbackMTU)
		case m > 0:
			*mtu = m
		default:
			log.Warn("no default route; using the fallback MTU", "mtu", fallbackMTU)
		}
	}
	log.Info("starting", "node", nodeName, "host_ip", os.Getenv(envHostIP), "pod_subnet", os.Getenv(envPodSubnet),
		"api_server", cfg.Host, "cni_conf_dir", *confDir, "mtu", *mtu)

	c, err := newController(controllerConfig{
		NodeName:   nodeName,
		CNIConfDir: *confDir,
		MTU:        *mtu,
		Resync:     *resync,
		Routes:     netlinkRoutes{},
		Log:        log,
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err = c.Run(ctx, client)
	log.Info("stopping", "reason", context.Cause(ctx))
	return err
}

// restConfig talks to endpoint (kind's CONTROL_PLANE_ENDPOINT, "host:port")
// with the pod's service account, or uses the in-cluster config (the
// kubernetes Service, which needs kube-proxy) when endpoint is empty.
func restConfig(endpoint, saDir string) (*rest.Config, error) {
	if endpoint == "" {
		return rest.InClusterConfig()
	}
	host := endpoint
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	token, ca := filepath.Join(saDir, "token"), filepath.Join(saDir, "ca.crt")
	for _, f := range []string{token, ca} {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("service account: %w", err)
		}
	}
	return &rest.Config{
		Host:            host,
		BearerTokenFile: token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: ca},
	}, nil
}
