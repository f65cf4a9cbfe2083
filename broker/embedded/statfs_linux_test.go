package embedded

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestDiskBytesInFragments: Linux counts a file system's blocks in
// f_frsize units. ZFS reports f_bsize as its record size (128 KiB) over
// 512-byte fragments: reckoned in f_bsize, a 1 TiB dataset was exported
// as 256 TiB, and an alert on weir_broker_disk_free_bytes under some
// gigabytes never fired.
func TestDiskBytesInFragments(t *testing.T) {
	st := unix.Statfs_t{Bsize: 128 << 10, Frsize: 512, Blocks: 1 << 31, Bfree: 1 << 21, Bavail: 1 << 20}
	free, size := diskBytes(&st, false)
	if size != 1<<40 || free != 512<<20 {
		t.Errorf("1 TiB in 512-byte fragments, 512 MiB of them free: size %d, free %d", size, free)
	}
	if free, _ := diskBytes(&st, true); free != 1<<30 {
		t.Errorf("free to root %d, want the reserved blocks too (1 GiB)", free)
	}
	// A kernel that leaves f_frsize at 0: f_bsize.
	st = unix.Statfs_t{Bsize: 4096, Blocks: 256, Bavail: 16}
	if free, size := diskBytes(&st, false); size != 1<<20 || free != 64<<10 {
		t.Errorf("f_frsize 0: size %d, free %d", size, free)
	}
}
