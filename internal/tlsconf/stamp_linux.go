package tlsconf

import (
	"os"
	"syscall"
)

// sysStamp is a file's inode and change time.
type sysStamp struct {
	dev, ino uint64
	ctime    syscall.Timespec
}

func sysStampOf(fi os.FileInfo) sysStamp {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return sysStamp{}
	}
	return sysStamp{dev: uint64(st.Dev), ino: st.Ino, ctime: st.Ctim}
}
