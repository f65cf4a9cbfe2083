package configs

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.yaml.in/yaml/v3"
)

// FuzzListenersBind: two listen addresses the config check passes can
// both be listened on, as weir run does (a check that said ok, then
// "address already in use" at start). Only loopback and unspecified
// hosts are bound; a port something else holds is not counted. The fuzz
// workers, processes of their own, bind one at a time (bindLock): two
// binding one port at once made a clash of each other's.
func FuzzListenersBind(f *testing.F) {
	for _, s := range [][2]string{
		{"127.0.0.1:19273", "127.0.0.1:19274"},
		{"127.0.0.1:19273", "localhost:19273"},
		{"127.0.0.1:19273", "127.0.0.1:+19273"},
		{"127.0.0.1:19273", "127.0.0.1:019273"},
		{"0.0.0.0:19273", "[::1]:19273"},
		{"[::ffff:127.0.0.1]:19273", "127.0.0.1:19273"},
	} {
		f.Add(s[0], s[1], false)
		f.Add(s[0], s[1], true)
	}
	f.Fuzz(func(t *testing.T, a, b string, udp bool) {
		for _, addr := range []string{a, b} {
			if !bindable(addr) {
				return
			}
		}
		var doc map[string]any
		if udp {
			doc = map[string]any{"syslog": map[string]any{"listeners": []map[string]string{
				{"protocol": "udp", "address": a}, {"protocol": "udp", "address": b}}}}
		} else {
			doc = map[string]any{"http": map[string]string{"listen": a},
				"sinks": []map[string]any{{"type": "prometheus", "name": "p", "topics": []string{"metrics"}, "listen": b}}}
		}
		y, err := yaml.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := Parse(y)
		if err != nil {
			return
		}
		defer bindLock(t)()
		var closers []func() error
		defer func() {
			for _, c := range closers {
				c()
			}
		}()
		for _, l := range cfg.Listeners() {
			if l.Key == "snmp.traps.listen" {
				continue
			}
			c, err := listen(l.Network, string(l.Address))
			if err == nil {
				closers = append(closers, c)
				continue
			}
			if !errors.Is(err, syscall.EADDRINUSE) {
				return // not this machine's address, or no IPv6
			}
			for _, c := range closers {
				c()
			}
			closers = nil
			// Alone, it can be listened on: the check's other
			// listener took it.
			if c, err := listen(l.Network, string(l.Address)); err == nil {
				c()
				t.Fatalf("check passed %s and %s (udp %v); run fails at %s: address already in use", a, b, udp, l.Key)
			}
			return
		}
	})
}

// bindLock holds a lock file's lock, which the fuzz workers share, until
// the returned func (closing the file releases it).
func bindLock(t *testing.T) func() {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "weir-fuzz-listeners.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	return func() { f.Close() }
}

// bindable: a host:port on loopback, the unspecified address or
// localhost, whose port is not 0.
func bindable(hp string) bool {
	h, p, err := net.SplitHostPort(hp)
	if err != nil || strings.Trim(p, "+-0") == "" {
		return false
	}
	if h == "" || strings.EqualFold(h, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Zone() == "" && (ip.IsLoopback() || ip.IsUnspecified())
}

func listen(network, addr string) (func() error, error) {
	if network == "udp" {
		c, err := net.ListenPacket(network, addr)
		if err != nil {
			return nil, err
		}
		return c.Close, nil
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		return nil, err
	}
	return l.Close, nil
}
