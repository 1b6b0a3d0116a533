// Package frozen thaws the cgroups a killed runc left frozen inside a
// container. runc freezes a container's cgroup while it sets it up (cgroup
// v1's device rules); killed in between — a kind node deleted while its
// containerd was starting a pod — it leaves the cgroup FROZEN and its
// `runc init` in D state, which keeps the node's PID namespace alive, so
// Docker cannot remove the node ("tried to kill container, but did not
// receive an exit event") and the container stays forever. Thawing lets the
// kill finish.
package frozen

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CgroupRoot is where this host mounts its cgroups.
const CgroupRoot = "/sys/fs/cgroup"

// Roots are the cgroup directories of a Docker container, by its full ID,
// under a cgroup mount root: cgroup v1's freezer hierarchy (cgroupfs and
// systemd drivers) and cgroup v2's unified tree (both drivers). Those that
// do not exist on a host are skipped by Thaw.
func Roots(cgroupRoot, id string) []string {
	scope := "docker-" + id + ".scope"
	return []string{
		filepath.Join(cgroupRoot, "freezer", "docker", id),
		filepath.Join(cgroupRoot, "freezer", "system.slice", scope),
		filepath.Join(cgroupRoot, "docker", id),
		filepath.Join(cgroupRoot, "system.slice", scope),
	}
}

// Thaw thaws every frozen cgroup under the roots (v1: freezer.state FROZEN
// or FREEZING → THAWED; v2: cgroup.freeze 1 → 0) and returns the cgroups it
// thawed. A root that does not exist is not an error.
func Thaw(roots ...string) ([]string, error) {
	var thawed []string
	var errs []error
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // gone while walking, or never there
				}
				return err
			}
			var thaw string
			switch d.Name() {
			case "freezer.state":
				thaw = "THAWED"
			case "cgroup.freeze":
				thaw = "0"
			default:
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return nil // the cgroup went away
			}
			state := strings.TrimSpace(string(b))
			if state == "THAWED" || state == "0" {
				return nil
			}
			if err := os.WriteFile(path, []byte(thaw), 0); err != nil {
				errs = append(errs, fmt.Errorf("thawing %s (%s): %w", filepath.Dir(path), state, err))
				return nil
			}
			thawed = append(thawed, filepath.Dir(path))
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("looking for frozen cgroups under %s: %w", root, err))
		}
	}
	return thawed, errors.Join(errs...)
}
