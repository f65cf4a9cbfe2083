package embedded

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// descriptorPartitions derives the bound on all topics' partitions from the
// process's open-file limit (RLIMIT_NOFILE's soft limit, which Go raises to
// the hard limit at start on Linux), and says where it comes from.
//
// A partition holds one descriptor per segment: the .log file stays open,
// its index files are opened only while read or written. A new partition
// holds one. Half the limit goes to partitions; the other half is left for
// the segments partitions roll to, the Kafka listener's connections (4096
// by default), the syslog and HTTP listeners', and the brief opens of
// index files and directories at flushes and creations. Without that
// margin, creations used every descriptor and weir failed to accept
// connections and to flush.
func descriptorPartitions() (int, string) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		// Not expected on Linux or macOS; the per-topic bound still holds.
		return 1 << 20, fmt.Sprintf("the open-file limit is unknown: %v", err)
	}
	// An unlimited limit (RLIM_INFINITY) must not overflow int.
	n := int(min(lim.Cur, 1<<40) / 2)
	return max(n, 1), fmt.Sprintf("half the process's open-file limit of %d: raise the limit (ulimit -n, systemd's LimitNOFILE) or set broker.max_partitions", lim.Cur)
}
