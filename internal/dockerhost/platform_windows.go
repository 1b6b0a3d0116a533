package dockerhost

import (
	"io/fs"
	"syscall"
)

// fileOwner: Windows files have no uid or gid; -1 leaves the owner as the
// rewrite makes it. Unreached in practice: CanProvision refuses on any OS
// but Linux, and cmd/termlab refuses the commands that need Docker on
// Windows (internal/cli).
func fileOwner(fs.FileInfo) (uid, gid int) { return -1, -1 }

// ownSession: Windows has no sessions to leave; see fileOwner.
func ownSession() *syscall.SysProcAttr { return nil }
