package clusterswitch

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// The ServiceAccount's files in every pod that mounts its token.
const (
	saDir     = "/var/run/secrets/kubernetes.io/serviceaccount"
	tokenFile = saDir + "/token"
	caFile    = saDir + "/ca.crt"
)

// InCluster is the API as the switch pod reaches it: the API server's
// Service address from the environment, the ServiceAccount's token and CA.
type InCluster struct {
	base   string
	client *http.Client
	token  func() (string, error)
}

// NewInCluster reads the pod's environment and ServiceAccount.
func NewInCluster() (*InCluster, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, errors.New("not in a pod: KUBERNETES_SERVICE_HOST or _PORT is not set")
	}
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("reading the ServiceAccount's CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s holds no certificate", caFile)
	}
	return &InCluster{
		base:   "https://" + net.JoinHostPort(host, port),
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}},
		// Read at each request: the kubelet rotates projected tokens.
		token: func() (string, error) {
			b, err := os.ReadFile(tokenFile)
			return strings.TrimSpace(string(b)), err
		},
	}, nil
}

// apiError is the API server's answer to a request that did not succeed.
type apiError struct {
	Code int
	Body string
}

func (e *apiError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Code, e.Body) }

func isStatus(err error, code int) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Code == code
}

// do sends one request and decodes a 2xx answer into out (nil: ignored).
func (c *InCluster) do(ctx context.Context, method, path, contentType string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	tok, err := c.token()
	if err != nil {
		return fmt.Errorf("reading the ServiceAccount's token: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "termlab-switch")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return &apiError{Code: resp.StatusCode, Body: strings.TrimSpace(string(b))}
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// GetLease reads the run lock's Lease.
func (c *InCluster) GetLease(ctx context.Context, namespace, name string) (Lease, error) {
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Spec struct {
			HolderIdentity *string `json:"holderIdentity"`
		} `json:"spec"`
	}
	err := c.do(ctx, http.MethodGet, "/apis/coordination.k8s.io/v1/namespaces/"+url.PathEscape(namespace)+"/leases/"+url.PathEscape(name), "", nil, &l)
	if isStatus(err, http.StatusNotFound) {
		return Lease{}, nil
	}
	if err != nil {
		return Lease{}, err
	}
	out := Lease{Found: true, ResourceVersion: l.Metadata.ResourceVersion}
	if l.Spec.HolderIdentity != nil {
		out.Holder = *l.Spec.HolderIdentity
	}
	return out, nil
}

// taint is a node taint as the API has it.
type taint struct {
	Key       string `json:"key"`
	Value     string `json:"value,omitempty"`
	Effect    string `json:"effect"`
	TimeAdded string `json:"timeAdded,omitempty"`
}

// RemoveTaint removes the taint and the run's mark with a merge patch that
// names the node's resourceVersion, so a change in between is a conflict
// (read again), not overwritten.
func (c *InCluster) RemoveTaint(ctx context.Context, u Undo, runID string) (bool, error) {
	path := "/api/v1/nodes/" + url.PathEscape(u.Node)
	var node struct {
		Metadata struct {
			ResourceVersion string            `json:"resourceVersion"`
			Annotations     map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec struct {
			Taints []taint `json:"taints"`
		} `json:"spec"`
	}
	if err := c.do(ctx, http.MethodGet, path, "", nil, &node); err != nil {
		if isStatus(err, http.StatusNotFound) {
			return false, nil
		}
		return false, err
	}
	patch, changed := untaintPatch(node.Metadata.ResourceVersion, node.Metadata.Annotations, node.Spec.Taints, u, runID)
	if !changed {
		return false, nil
	}
	return true, c.do(ctx, http.MethodPatch, path, "application/merge-patch+json", patch, nil)
}

// untaintPatch is the merge patch that removes u's taint and the run's
// mark, or nothing when the mark does not name runID (another run's, or
// the taint already gone with it).
func untaintPatch(rv string, annotations map[string]string, taints []taint, u Undo, runID string) (map[string]any, bool) {
	if annotations[u.TaintedBy] != runID {
		return nil, false
	}
	kept := []taint{}
	for _, t := range taints {
		if t.Key == u.TaintKey && t.Effect == u.TaintEffect {
			continue
		}
		kept = append(kept, t)
	}
	return map[string]any{
		"metadata": map[string]any{"resourceVersion": rv, "annotations": map[string]any{u.TaintedBy: nil}},
		"spec":     map[string]any{"taints": kept},
	}, true
}

// DeleteAPIService deletes the APIService; gone already is done.
func (c *InCluster) DeleteAPIService(ctx context.Context, name string) error {
	err := c.do(ctx, http.MethodDelete, "/apis/apiregistration.k8s.io/v1/apiservices/"+url.PathEscape(name), "", nil, nil)
	if isStatus(err, http.StatusNotFound) {
		return nil
	}
	return err
}

// DeleteNamespace deletes the namespace; gone already, or being deleted
// (the API server answers 409 Conflict then), is done.
func (c *InCluster) DeleteNamespace(ctx context.Context, name string) error {
	err := c.do(ctx, http.MethodDelete, "/api/v1/namespaces/"+url.PathEscape(name), "", nil, nil)
	if isStatus(err, http.StatusNotFound) || isStatus(err, http.StatusConflict) {
		return nil
	}
	return err
}

// DeleteSelf deletes the switch's namespace (its pod with it), then its
// ClusterRole; the binding that grants these deletes is owned by the role
// (the arming side sets it), so the garbage collector deletes it after the
// role. Deleting the binding itself would fail: once either of the two is
// gone the ServiceAccount may delete nothing.
func (c *InCluster) DeleteSelf(ctx context.Context, self Self) error {
	for _, path := range []string{
		"/api/v1/namespaces/" + url.PathEscape(self.Namespace),
		"/apis/rbac.authorization.k8s.io/v1/clusterroles/" + url.PathEscape(self.ClusterRole),
	} {
		if err := c.do(ctx, http.MethodDelete, path, "", nil, nil); err != nil && !isStatus(err, http.StatusNotFound) {
			return fmt.Errorf("DELETE %s: %w", path, err)
		}
	}
	return nil
}
