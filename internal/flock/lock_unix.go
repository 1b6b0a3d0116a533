//go:build unix

package flock

import (
	"os"
	"syscall"
)

// errHeld is what lockNB returns while another process holds the lock.
var errHeld = syscall.EWOULDBLOCK

func lockNB(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

func unlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
