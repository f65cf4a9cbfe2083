package influxdb_test

import (
	"net"
	"time"
)

// listenRetry binds addr again; the port was just freed, so retry briefly.
func listenRetry(addr string) (net.Listener, error) {
	var err error
	for range 50 {
		var l net.Listener
		if l, err = net.Listen("tcp", addr); err == nil {
			return l, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, err
}
