package nodeimage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/exec"

	"github.com/termlab/termlab/internal/cachekey"
	"github.com/termlab/termlab/internal/dockerimage"
	"github.com/termlab/termlab/internal/progress"
)

// preloadRecipe changes when the layer's recipe does, so every key changes.
const preloadRecipe = "preload-v1"

// PreloadedRef is the tag of base with images preloaded: one per base
// reference (its tag, then a hash of the whole reference, which may carry a
// digest), so an official and a built base of one release never share it.
func PreloadedRef(base string) string {
	tag := base
	if i := strings.IndexByte(tag, '@'); i >= 0 {
		tag = tag[:i]
	}
	if i := strings.LastIndexByte(tag, ':'); i >= 0 && !strings.Contains(tag[i:], "/") {
		tag = tag[i+1:]
	} else {
		tag = "latest"
	}
	sum := sha256.Sum256([]byte(base))
	return Ref("node-preloaded", tag+"-"+hex.EncodeToString(sum[:])[:8])
}

// Preload returns a node image that is base with refs already in its
// containerd, pinned like the base's own images: a cluster created from it
// loads nothing. It is one thin layer on top of base, rebuilt only when the
// base or one of refs changed (by image ID), so a workload change costs
// seconds, not a node image build. A new one replaces its older self.
func Preload(ctx context.Context, log *progress.Logger, cacheDir, base string, refs []string) (string, error) {
	k := cachekey.New().Add("recipe", preloadRecipe)
	for _, r := range append([]string{base}, refs...) {
		id, err := dockerimage.ID(ctx, r)
		if err != nil {
			return "", fmt.Errorf("preloading images into the node image: %w", err)
		}
		k.Add(r, id)
	}
	key := k.String()
	ref := PreloadedRef(base)
	if dockerimage.HasInputs(ctx, ref, key) {
		log.Infof("node image %s: up to date (%s with %s preloaded)", ref, base, strings.Join(refs, ", "))
		AppendRecord(cacheDir, BuildRecord{Name: "node-preloaded", Key: key, Cached: true, FinishedAt: time.Now()})
		return ref, nil
	}
	begin := time.Now()
	done := log.Step(fmt.Sprintf("preloading %s into node image %s (on %s)", strings.Join(refs, ", "), ref, base))
	err := layer(ctx, base, ref, key, refs)
	done(err)
	if err != nil {
		return "", err
	}
	AppendRecord(cacheDir, BuildRecord{Name: "node-preloaded", Key: key, DurationSeconds: time.Since(begin).Seconds(), FinishedAt: time.Now()})
	removeReplaced(ctx)
	return ref, nil
}

// removeReplaced removes preloaded node images that a newer one replaced
// (untagged) and no container runs any more; docker refuses the others,
// which a later Preload removes once their cluster is gone.
func removeReplaced(ctx context.Context) {
	ids, err := exec.OutputLines(exec.CommandContext(ctx, "docker", "image", "ls", "-q",
		"--filter", "dangling=true", "--filter", "label="+dockerimage.BaseLabel))
	if err != nil {
		return
	}
	for _, id := range ids {
		_ = exec.CommandContext(ctx, "docker", "rmi", id).Run()
	}
}

// layer imports refs into a container of base and commits it as ref,
// keeping base's entrypoint and command (its stop signal comes with the
// container's config).
func layer(ctx context.Context, base, ref, key string, refs []string) error {
	var cfg struct {
		Entrypoint []string
		Cmd        []string
	}
	out, err := exec.Output(exec.CommandContext(ctx, "docker", "image", "inspect", "--format", "{{json .Config}}", base))
	if err == nil {
		err = json.Unmarshal(out, &cfg)
	}
	if err != nil {
		return fmt.Errorf("reading the config of node image %s: %w", base, err)
	}
	if len(cfg.Entrypoint) == 0 {
		return fmt.Errorf("node image %s has no entrypoint: not a kind node image", base)
	}
	c, err := startBuildContainer(ctx, base)
	if err != nil {
		return err
	}
	defer c.remove()
	if err := preload(ctx, c, refs); err != nil {
		return err
	}
	entrypoint, _ := json.Marshal(cfg.Entrypoint)
	cmd, _ := json.Marshal(cfg.Cmd)
	if cfg.Cmd == nil {
		cmd = []byte("[]")
	}
	if out, err := exec.CombinedOutputLines(exec.CommandContext(ctx, "docker", "commit",
		"--change", "ENTRYPOINT "+string(entrypoint),
		"--change", "CMD "+string(cmd),
		"--change", fmt.Sprintf("LABEL %s=%q %s=%q", dockerimage.InputsLabel, key, dockerimage.BaseLabel, base),
		c.id, ref)); err != nil {
		return fmt.Errorf("committing node image %s: %v: %s", ref, err, strings.Join(out, "\n"))
	}
	return nil
}
