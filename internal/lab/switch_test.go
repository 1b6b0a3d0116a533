package lab

import (
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/clusterswitch"
)

// The switch may touch only what it undoes and itself, each by name.
func TestSwitchRulesNameEveryObject(t *testing.T) {
	for _, undo := range []clusterswitch.Undo{
		{Node: "w2", TaintKey: "k", TaintEffect: "NoExecute", TaintedBy: TaintedByAnnotation},
		{APIService: "v1.x.unavailable.termlab.dev"},
	} {
		spec := clusterswitch.Spec{LeaseName: "termlab-run-lock", Undo: undo, Self: clusterswitch.Self{Namespace: "ns", ClusterRole: "cr", ClusterRoleBinding: "crb"}}
		rules := switchRules(spec)
		var touched []string
		for _, r := range rules {
			if len(r.ResourceNames) == 0 {
				t.Errorf("%s: rule %+v names no object: it would grant every one", undo.What(), r)
			}
			for _, v := range r.Verbs {
				if v == "list" || v == "watch" || v == "create" || v == "*" {
					t.Errorf("%s: rule %+v grants %s", undo.What(), r, v)
				}
			}
			touched = append(touched, r.Resources[0]+"/"+strings.Join(r.ResourceNames, ","))
		}
		want := "leases/termlab-run-lock namespaces/ns clusterroles/cr "
		if undo.Node != "" {
			want += "nodes/w2"
		} else {
			want += "apiservices/v1.x.unavailable.termlab.dev"
		}
		if got := strings.Join(touched, " "); got != want {
			t.Errorf("rules touch %s, want %s", got, want)
		}
	}
}

// A switch's names carry no run id (the run's audit tail keeps what is
// named with it) and differ by switch.
func TestSwitchName(t *testing.T) {
	id := NewRunID(time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC))
	a, b := switchName(id, 1), switchName(id, 2)
	if a == b || strings.Contains(a, id) || len(a) > 63 || !strings.HasPrefix(a, "termlab-switch-") {
		t.Errorf("switch names %q, %q for run %s", a, b, id)
	}
}
