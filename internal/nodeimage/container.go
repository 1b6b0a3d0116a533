package nodeimage

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/exec"
)

// buildContainer is a throw-away container the node image is assembled in;
// it implements kind's exec.Cmder so commands in it go through the same seam
// as commands on a cluster node.
type buildContainer struct{ id string }

var _ exec.Cmder = buildContainer{}

func (c buildContainer) Command(name string, args ...string) exec.Cmd {
	return c.CommandContext(context.Background(), name, args...)
}

func (c buildContainer) CommandContext(ctx context.Context, name string, args ...string) exec.Cmd {
	return exec.CommandContext(ctx, "docker", append([]string{"exec", "-i", c.id, name}, args...)...)
}

// run runs a command in the container, keeping its output in the error.
func (c buildContainer) run(ctx context.Context, name string, args ...string) error {
	if out, err := exec.CombinedOutputLines(c.CommandContext(ctx, name, args...)); err != nil {
		return fmt.Errorf("in build container: %s %s: %v: %s", name, strings.Join(args, " "), err, strings.Join(out, "\n"))
	}
	return nil
}

// output runs a command in the container and returns its stdout.
func (c buildContainer) output(ctx context.Context, name string, args ...string) ([]byte, error) {
	out, err := exec.Output(c.CommandContext(ctx, name, args...))
	if err != nil {
		return nil, fmt.Errorf("in build container: %s %s: %w", name, strings.Join(args, " "), err)
	}
	return out, nil
}

// writeFile writes content to path inside the container.
func (c buildContainer) writeFile(ctx context.Context, path string, content []byte) error {
	cmd := c.CommandContext(ctx, "cp", "/dev/stdin", path).SetStdin(strings.NewReader(string(content)))
	if out, err := exec.CombinedOutputLines(cmd); err != nil {
		return fmt.Errorf("writing %s in build container: %v: %s", path, err, strings.Join(out, "\n"))
	}
	return nil
}

// copyTar extracts a tar stream at / inside the container.
func (c buildContainer) copyTar(ctx context.Context, r io.Reader) error {
	if out, err := exec.CombinedOutputLines(exec.CommandContext(ctx, "docker", "cp", "-", c.id+":/").SetStdin(r)); err != nil {
		return fmt.Errorf("copying files into build container: %v: %s", err, strings.Join(out, "\n"))
	}
	return nil
}

// waitFor retries a command until it succeeds or the timeout passes.
func (c buildContainer) waitFor(ctx context.Context, timeout time.Duration, what string, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if last = c.CommandContext(ctx, name, args...).Run(); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s in build container (%s): %v", what, timeout, last)
		case <-time.After(300 * time.Millisecond):
		}
	}
}

func startBuildContainer(ctx context.Context, image string) (buildContainer, error) {
	out, err := exec.Output(exec.CommandContext(ctx, "docker", "run", "-d", "--privileged",
		"--label", "termlab.dev/build=node-image", "--entrypoint", "sleep", image, "infinity"))
	if err != nil {
		return buildContainer{}, fmt.Errorf("starting node build container from %s: %w", image, err)
	}
	return buildContainer{id: strings.TrimSpace(string(out))}, nil
}

func (c buildContainer) remove() {
	_ = exec.Command("docker", "rm", "-f", "-v", c.id).Run()
}
