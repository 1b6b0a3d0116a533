//go:build mage

package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/termlab/termlab/internal/diagnose"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/stack"
)

// Diagnose says, read-only, why a pod or namespace is still there: -pod=<ns>/<name> or -namespace=<ns> [-kubeconfig=<path>] [-nodeaccess]; writes results/diagnose/.
//
// Without -kubeconfig it reads termlab's cluster and checks the node
// through kind (docker exec) unless -nodeaccess=false. With -kubeconfig it
// needs nothing but that file: node checks then say "not checked" unless
// -nodeaccess, which starts a short-lived privileged pod on each node it
// asks (removed before it returns). (mage names a flag after the Go
// parameter, lowercased: hence -nodeaccess.)
func Diagnose(ctx context.Context, pod, namespace, kubeconfig *string, nodeAccess *bool) (err error) {
	var ns, name string
	switch {
	case pod != nil && namespace != nil:
		return errors.New("diagnose takes -pod=<namespace>/<name> or -namespace=<namespace>, not both")
	case pod != nil:
		if ns, name, err = diagnose.ParsePod(*pod); err != nil {
			return err
		}
	case namespace != nil && *namespace != "":
		ns = *namespace
	default:
		return errors.New("diagnose needs -pod=<namespace>/<name> or -namespace=<namespace>")
	}
	log := progress.Default()
	kc := ""
	if kubeconfig != nil {
		kc = *kubeconfig
	}
	src, cleanup, err := stack.DiagnoseSource(ctx, log, kc, nodeAccess)
	if err != nil {
		return err
	}
	// The node pods go even after Ctrl-C, hence a context of its own. After
	// Ctrl-C mage ends the target within 5 s: the deletes are sent at once,
	// and the wait for them is cut to fit.
	defer func() {
		wait := 2 * time.Minute
		if ctx.Err() != nil {
			wait = 3 * time.Second
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
		defer cancel()
		if cerr := cleanup(cctx); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	root, err := project.Root()
	if err != nil {
		return err
	}
	var res diagnose.Result
	if name == "" {
		done := log.Step("diagnosing namespace " + ns)
		res, err = diagnose.RunNamespace(ctx, src, ns, project.ResultsDir(root))
		done(err)
	} else {
		res, err = diagnose.Run(ctx, src, ns, name, project.ResultsDir(root))
	}
	if err != nil {
		return err
	}
	fmt.Printf("%s\n\n%s (%s)\n", res.Summary.Answer, filepath.Join(res.Dir, diagnose.MarkdownFile), res.Took.Round(10_000_000))
	return nil
}
