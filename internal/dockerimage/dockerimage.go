// Package dockerimage wraps the few docker image operations termlab needs
// (inspect a label or the repository digests, pull, import, tag, save), all
// through kind's exec seam so a failure keeps the command and its output.
package dockerimage

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/exec"
)

// InputsLabel is the label that stores the cache key of the inputs an image was built from.
const InputsLabel = "termlab.dev/inputs"

// BaseLabel, on a node image with images preloaded (nodeimage.Preload),
// names the node image it was made from: a cluster running it counts as
// running that base.
const BaseLabel = "termlab.dev/base-image"

// Labels returns an image's labels, and whether the image exists.
func Labels(ctx context.Context, ref string) (map[string]string, bool) {
	out, err := exec.Output(exec.CommandContext(ctx, "docker", "image", "inspect", "--format", "{{json .Config.Labels}}", ref))
	if err != nil {
		return nil, false
	}
	labels := map[string]string{}
	_ = json.Unmarshal(out, &labels)
	return labels, true
}

// Exists reports whether ref is present in the local engine.
func Exists(ctx context.Context, ref string) bool {
	_, ok := Labels(ctx, ref)
	return ok
}

// RepoDigests returns an image's repository digests (`repo@sha256:…`, one
// for each registry repository it was pulled from or pushed to), and whether
// the image exists. An image loaded with `docker load` or built here has none.
func RepoDigests(ctx context.Context, ref string) ([]string, bool) {
	out, err := exec.Output(exec.CommandContext(ctx, "docker", "image", "inspect", "--format", "{{json .RepoDigests}}", ref))
	if err != nil {
		return nil, false
	}
	var digests []string
	_ = json.Unmarshal(out, &digests)
	return digests, true
}

// HasInputs reports whether ref exists and was built from inputs with this key.
func HasInputs(ctx context.Context, ref, key string) bool {
	labels, ok := Labels(ctx, ref)
	return ok && labels[InputsLabel] == key
}

// ID returns the image ID of ref.
func ID(ctx context.Context, ref string) (string, error) {
	out, err := exec.Output(exec.CommandContext(ctx, "docker", "image", "inspect", "--format", "{{.Id}}", ref))
	if err != nil {
		return "", fmt.Errorf("inspecting image %s: %w", ref, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Pull tries to pull ref within timeout. Offline, it fails in milliseconds.
func Pull(ctx context.Context, ref string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if out, err := exec.CombinedOutputLines(exec.CommandContext(ctx, "docker", "pull", "-q", ref)); err != nil {
		return fmt.Errorf("pulling %s: %v: %s", ref, err, strings.Join(out, " "))
	}
	return nil
}

// ImportOptions describe the image made by Import.
type ImportOptions struct {
	Entrypoint []string
	Cmd        []string
	Env        []string
	Labels     map[string]string
}

// Changes renders the options as `docker import --change` instructions.
// Labels are rendered sorted so equal options give equal commands.
func (o ImportOptions) Changes() []string {
	var out []string
	if len(o.Entrypoint) > 0 {
		b, _ := json.Marshal(o.Entrypoint)
		out = append(out, "ENTRYPOINT "+string(b))
	}
	if len(o.Cmd) > 0 {
		b, _ := json.Marshal(o.Cmd)
		out = append(out, "CMD "+string(b))
	}
	for _, e := range o.Env {
		out = append(out, "ENV "+e)
	}
	keys := make([]string, 0, len(o.Labels))
	for k := range o.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, fmt.Sprintf("LABEL %s=%q", k, o.Labels[k]))
	}
	return out
}

// Import creates image ref from a root filesystem tar stream.
func Import(ctx context.Context, tarStream io.Reader, ref string, opts ImportOptions) error {
	args := []string{"import"}
	for _, c := range opts.Changes() {
		args = append(args, "--change", c)
	}
	args = append(args, "-", ref)
	if out, err := exec.CombinedOutputLines(exec.CommandContext(ctx, "docker", args...).SetStdin(tarStream)); err != nil {
		return fmt.Errorf("docker import of %s: %v: %s", ref, err, strings.Join(out, "\n"))
	}
	return nil
}

// Save writes `docker save` of refs to w.
func Save(ctx context.Context, w io.Writer, refs ...string) error {
	args := append([]string{"save"}, refs...)
	var stderr strings.Builder
	if err := exec.CommandContext(ctx, "docker", args...).SetStdout(w).SetStderr(&stderr).Run(); err != nil {
		return fmt.Errorf("docker save %v: %v: %s", refs, err, stderr.String())
	}
	return nil
}
