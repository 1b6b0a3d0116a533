// Package labs is the registry of termlab's labs: the one list that lab:all,
// the workshop, its guide and WORKSHOP.md, the end-to-end tests and the
// README's table derive from. A new lab is its folder under labs/ (package,
// README.md), its manifests, its reference run, one line here and its
// one-line mage target in magefiles/targets/lab.go.
package labs

import (
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/labs/finalizer"
	"github.com/termlab/termlab/labs/force"
	"github.com/termlab/termlab/labs/graceful"
	kwoklab "github.com/termlab/termlab/labs/kwok"
	"github.com/termlab/termlab/labs/mount"
	namespacelab "github.com/termlab/termlab/labs/namespace"
	"github.com/termlab/termlab/labs/orphan"
	"github.com/termlab/termlab/labs/scale"
	"github.com/termlab/termlab/labs/sidecar"
	"github.com/termlab/termlab/labs/statefulset"
	"github.com/termlab/termlab/labs/stuck"
)

// All is every lab, in the order lab:all and the workshop run them.
var All = []lab.Definition{
	finalizer.Definition,
	force.Definition,
	orphan.Definition,
	stuck.Definition,
	statefulset.Definition,
	graceful.Definition,
	kwoklab.Definition,
	sidecar.Definition,
	mount.Definition,
	scale.Definition,
	namespacelab.Definition,
}

// ByName returns the registered lab with the name.
func ByName(name string) (lab.Definition, bool) {
	for _, d := range All {
		if d.Name == name {
			return d, true
		}
	}
	return lab.Definition{}, false
}
