//go:build !linux

package syslog

// udpReaders is one reader whatever the config asks: outside Linux,
// sockets sharing a port (SO_REUSEPORT) do not share its datagrams.
func udpReaders(int) int { return 1 }

// reusePort is not needed with one reader.
func reusePort(uintptr) error { return nil }

// msgTrunc is not looked for here: ReadBatch reads one datagram a call,
// and one longer than its buffer is marked truncated by its length.
const msgTrunc = 0

// unreadBytes is not known here: nothing is logged at stop.
func unreadBytes(uintptr) int { return 0 }
