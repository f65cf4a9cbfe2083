package trap

import (
	"net"
	"syscall"
)

// setReadBuffer sizes the socket's receive buffer: SO_RCVBUFFORCE first,
// which passes net.core.rmem_max when weir runs as root (or with
// CAP_NET_ADMIN), else the capped SO_RCVBUF. A burst of traps (a chassis
// losing power sends hundreds at once) must wait in the kernel, not be
// dropped there.
func setReadBuffer(c *net.UDPConn, size int) {
	raw, err := c.SyscallConn()
	if err == nil {
		var serr error
		_ = raw.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, size)
		})
		if serr == nil {
			return
		}
	}
	_ = c.SetReadBuffer(size)
}
