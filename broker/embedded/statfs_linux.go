package embedded

import "golang.org/x/sys/unix"

// diskBytes is a file system's bytes free (to root as well, for root) and
// its size. Linux counts blocks in f_frsize units: f_bsize is the
// preferred I/O size, which ZFS reports as the record size (128 KiB over
// 512-byte fragments), and FUSE file systems as they please.
func diskBytes(st *unix.Statfs_t, root bool) (free, size uint64) {
	unit := uint64(st.Frsize)
	if unit == 0 {
		unit = uint64(st.Bsize)
	}
	free = uint64(st.Bavail)
	if root {
		free = uint64(st.Bfree)
	}
	return free * unit, uint64(st.Blocks) * unit
}
