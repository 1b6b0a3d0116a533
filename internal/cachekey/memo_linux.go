package cachekey

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// identity is what must be unchanged for a remembered hash to hold ("" when
// the file is too small to be worth it or the platform says too little).
func identity(info os.FileInfo) string {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || info.Size() < memoMin {
		return ""
	}
	// File times tick coarsely (a few ms): a file changed within the last
	// second could change again within the same tick, unseen.
	if time.Since(time.Unix(st.Ctim.Sec, st.Ctim.Nsec)) < time.Second {
		return ""
	}
	return fmt.Sprintf("%d:%d:%d:%d.%09d:%d.%09d", st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
}
