//go:build !linux

package embedded

import "golang.org/x/sys/unix"

// diskBytes is a file system's bytes free (to root as well, for root) and
// its size; f_bsize is the block size the counts are in here.
func diskBytes(st *unix.Statfs_t, root bool) (free, size uint64) {
	free = uint64(st.Bavail)
	if root {
		free = uint64(st.Bfree)
	}
	return free * uint64(st.Bsize), uint64(st.Blocks) * uint64(st.Bsize)
}
