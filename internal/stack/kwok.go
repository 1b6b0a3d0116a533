package stack

import (
	"context"
	"fmt"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/images"
	"github.com/termlab/termlab/internal/kwok"
	"github.com/termlab/termlab/internal/progress"
)

// installKwok installs kwok's controller, the project's stages and the fake
// nodes (idempotent), then records what runs in env.
func installKwok(ctx context.Context, log *progress.Logger, env *cluster.Env, set images.Set, opts kwok.Options) error {
	if err := keepKubeProxyOffFakeNodes(ctx, env); err != nil {
		return err
	}
	opts.Image, opts.Log = set.Kwok, log
	done := log.Step(fmt.Sprintf("kwok %s (%s image) with %d fake nodes", kwok.ModuleVersion, set.KwokFrom, opts.FakeNodes))
	err := kwok.Install(ctx, env.RESTConfig, opts)
	done(err)
	if err != nil {
		return fmt.Errorf("installing kwok: %w", err)
	}
	return describeKwok(ctx, env)
}

// describeKwok fills env's fake node names and kwok versions from the cluster.
func describeKwok(ctx context.Context, env *cluster.Env) error {
	st, err := kwok.Status(ctx, env.RESTConfig)
	if err != nil {
		return fmt.Errorf("reading kwok status: %w", err)
	}
	env.FakeNodes = env.FakeNodes[:0]
	for _, n := range st.FakeNodes {
		if n.Managed {
			env.FakeNodes = append(env.FakeNodes, n.Name)
		}
	}
	env.Versions.Kwok = st.Image
	if st.Version != "" {
		env.Versions.Kwok = st.Version + " (" + st.Image + ")"
	}
	env.Versions.KwokStageSet = st.DefaultStageSet
	return nil
}
