// Package udpdrops counts the datagrams the kernel dropped on UDP sockets
// because their receive buffer was full: a burst the process never saw,
// so no counter of its own can show it. Linux gives each socket's count in
// the drops column of /proc/net/udp and /proc/net/udp6; elsewhere nothing
// is counted.
package udpdrops

import (
	"bufio"
	"context"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Watcher follows the kernel's drop count of some sockets.
type Watcher struct {
	inodes []string
	last   uint64
}

// New watches conns (those whose socket inode cannot be read are left out).
func New(conns ...*net.UDPConn) *Watcher {
	w := &Watcher{}
	for _, c := range conns {
		if inode := socketInode(c); inode != "" {
			w.inodes = append(w.inodes, inode)
		}
	}
	return w
}

// Run calls report with each increase of the sockets' drop count, checked
// every interval, until ctx ends. Drops from before New are not reported.
func (w *Watcher) Run(ctx context.Context, every time.Duration, report func(dropped uint64)) {
	if len(w.inodes) == 0 {
		return
	}
	w.last, _ = Dropped(w.inodes)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if n, ok := Dropped(w.inodes); ok && n > w.last {
			report(n - w.last)
			w.last = n
		}
	}
}

// socketInode is the inode /proc/net/udp names c's socket by.
func socketInode(c *net.UDPConn) string {
	raw, err := c.SyscallConn()
	if err != nil {
		return ""
	}
	var inode string
	raw.Control(func(fd uintptr) {
		link, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd)))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inode = strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")
		}
	})
	return inode
}

// Dropped sums the drops column of the sockets' lines (by inode) in
// /proc/net/udp and /proc/net/udp6; false when none is there.
func Dropped(inodes []string) (uint64, bool) {
	var sum uint64
	found := false
	for _, file := range []string{"/proc/net/udp", "/proc/net/udp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// sl local rem st tx:rx tr:when retrnsmt uid timeout inode ref pointer drops
			if len(fields) >= 13 && slices.Contains(inodes, fields[9]) {
				if n, err := strconv.ParseUint(fields[12], 10, 64); err == nil {
					sum += n
					found = true
				}
			}
		}
		f.Close()
	}
	return sum, found
}
