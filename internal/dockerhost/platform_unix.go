//go:build unix

package dockerhost

import (
	"io/fs"
	"syscall"
)

// fileOwner is the file's uid and gid, kept when daemon.json is rewritten.
func fileOwner(st fs.FileInfo) (uid, gid int) {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(sys.Uid), int(sys.Gid)
	}
	return -1, -1
}

// ownSession starts dockerd in its own session, so it outlives termlab and
// a Ctrl-C in termlab's terminal does not reach it.
func ownSession() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
