package workshop

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/progress"
)

// A lab run repairs what other runs left (lab.RepairLeftovers): it starts
// stopped kubelets and deletes other runs' namespaces. On a cluster shared by
// several people (a trainer's machine, CI) that breaks a run still going, so
// Reset refuses and Session waits while one looks in progress. Without a
// lock held by the running process this is a heuristic: a run namespace that
// is neither being deleted nor kept and is younger than activeRunAge (a lab's
// steps are bounded by 10 minutes, its cleanup by 2) is taken for a live run.

// activeRunAge is how long a run namespace counts as a run in progress.
const activeRunAge = 15 * time.Minute

// ForceEnv makes Reset go on although a run looks in progress.
const ForceEnv = "TERMLAB_FORCE"

// ActiveRun is a run namespace that looks like a run in progress.
type ActiveRun struct {
	Namespace string
	Lab       string
	Age       time.Duration
}

func (a ActiveRun) String() string {
	return fmt.Sprintf("%s (lab:%s, started %s ago)", a.Namespace, a.Lab, a.Age.Round(time.Second))
}

// ActiveRuns lists the run namespaces that look in progress, oldest first.
func ActiveRuns(ctx context.Context, client kubernetes.Interface) ([]ActiveRun, error) {
	list, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: lab.RunIDLabel})
	if err != nil {
		return nil, fmt.Errorf("listing run namespaces: %w", err)
	}
	var out []ActiveRun
	for _, ns := range list.Items {
		age := time.Since(ns.CreationTimestamp.Time)
		if ns.DeletionTimestamp != nil || ns.Labels[lab.KeepLabel] == "true" || age > activeRunAge {
			continue
		}
		out = append(out, ActiveRun{Namespace: ns.Name, Lab: ns.Labels[lab.LabLabel], Age: age})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Age > out[j].Age })
	return out, nil
}

// waitNoActiveRuns waits (up to timeout) until no other run is in progress.
func waitNoActiveRuns(ctx context.Context, log *progress.Logger, client kubernetes.Interface, timeout time.Duration) error {
	var last []ActiveRun
	said := ""
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		runs, err := ActiveRuns(ctx, client)
		if err != nil {
			return false, nil
		}
		last = runs
		if len(runs) > 0 {
			if s := describeRuns(runs); s != said {
				log.Infof("waiting: another lab run is in progress on this cluster: %s", s)
				said = s
			}
		}
		return len(runs) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("another lab run is still in progress after %s: %s", timeout, describeRuns(last))
	}
	return nil
}

func describeRuns(runs []ActiveRun) string {
	var s []string
	for _, r := range runs {
		s = append(s, r.String())
	}
	return strings.Join(s, ", ")
}

// refuseActiveRuns fails when a run looks in progress, unless TERMLAB_FORCE is set.
func refuseActiveRuns(ctx context.Context, log *progress.Logger, client kubernetes.Interface) error {
	runs, err := ActiveRuns(ctx, client)
	if err != nil || len(runs) == 0 {
		return err
	}
	if os.Getenv(ForceEnv) != "" {
		log.Warnf("%s is set: resetting although a lab run looks in progress: %s", ForceEnv, describeRuns(runs))
		return nil
	}
	return fmt.Errorf("a lab run looks in progress on this cluster: %s; resetting now would break it (restart its stopped kubelet, delete its namespace). Wait for it to end, or if it was killed, run again with %s=1",
		describeRuns(runs), ForceEnv)
}

// quickClient is a client for the cluster, for looking before touching
// anything; nil when the cluster does not answer.
func quickClient(ctx context.Context, name, kubeconfig string) kubernetes.Interface {
	cfg := cluster.AnsweringConfig(ctx, name, kubeconfig)
	if cfg == nil {
		return nil
	}
	cfg.Timeout = 5 * time.Second
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil
	}
	return c
}
