package embedded

import (
	"fmt"
	"syscall"
)

func mount(dir string, size int) error {
	return syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size))
}

func unmount(dir string) { syscall.Unmount(dir, 0) }
