package syslog

import (
	"bufio"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// TestUnixTimeLineNotHeldForTheNextByte: a sender whose first line is a
// bare Unix time ("1733150000\n", a heartbeat or a script's `date +%s`)
// and that sends nothing more for a while: the line is framed at its
// newline, not held for the next line's first byte (or the idle timeout,
// which would close the connection).
func TestUnixTimeLineNotHeldForTheNextByte(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	defer client.Close()
	go client.Write([]byte("1733150000\n"))
	m := newMetrics()
	r := &frameReader{conn: server, br: bufio.NewReaderSize(server, readBufferSize), max: 1024, stats: m.forListener("t")}
	done := make(chan string, 1)
	go func() {
		msg, _, err := r.next()
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		done <- string(msg)
	}()
	select {
	case got := <-done:
		if got != "1733150000" {
			t.Errorf("first line %q", got)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a complete first line of ten digits was held waiting for a byte past its newline")
	}
}

// stopRaceConn simulates the stop's AfterFunc running between idleConn's
// draining() check and its SetReadDeadline(quiet): the stop stores drainBy
// and sets its drain deadline, then idleConn's quiet deadline replaces it.
// It records the deadline each Read starts under.
type stopRaceConn struct {
	net.Conn
	drainBy  *atomic.Int64
	fired    bool
	deadline time.Time   // the last one set
	readsBy  []time.Time // the deadline in force at each Read
}

func (c *stopRaceConn) SetReadDeadline(t time.Time) error {
	if !c.fired {
		c.fired = true
		by := time.Now().Add(shutdownDrain)
		c.drainBy.Store(by.UnixNano())
		c.Conn.SetReadDeadline(drainDeadline(by))
	}
	c.deadline = t
	return c.Conn.SetReadDeadline(t)
}

func (c *stopRaceConn) Read(b []byte) (int, error) {
	c.readsBy = append(c.readsBy, c.deadline)
	return c.Conn.Read(b)
}

// TestQuietReadKeepsTheStopsDeadline: the stop's drain deadline, set in
// the instant between the quiet read's check and its own deadline, is
// applied again: a bloated connection's drain reads until drainQuiet,
// within the stop's shutdownDrain, not until trimAfter (1 s, past
// shutdownDrain+drainGrace, when the stop closes the socket). Checked on
// the deadlines the reads wait under, not on how long they took.
func TestQuietReadKeepsTheStopsDeadline(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	defer client.Close()
	var drainBy atomic.Int64
	rc := &stopRaceConn{Conn: server, drainBy: &drainBy}
	ic := &idleConn{Conn: rc, idle: time.Minute, progress: time.Now(),
		drainBy: &drainBy, bloated: func() bool { return true }, trim: func() {}}
	start := time.Now()
	buf := make([]byte, 64)
	_, err := ic.Read(buf)
	t.Logf("read during the stop's drain returned after %v (%v)", time.Since(start).Round(time.Millisecond), err)
	if len(rc.readsBy) == 0 {
		t.Fatal("no read on the connection")
	}
	by := time.Unix(0, drainBy.Load())
	for i, d := range rc.readsBy {
		if d.IsZero() || d.After(by) {
			t.Errorf("read %d waited under deadline %v, %v past the stop's drain deadline", i, d.Format("15:04:05.000"), d.Sub(by).Round(time.Millisecond))
		}
	}
}
