package configs

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// validateListeners refuses two listeners of one transport on one port
// where their hosts overlap (the same address, or either a wildcard):
// weir run would fail at start with "address already in use", after weir
// check said ok. Port 0 (a free port, picked at start) never clashes.
func (c *Config) validateListeners(add func(path, format string, args ...any)) {
	type listener struct {
		key  string
		host netip.Addr // the zero Addr for a name, which is compared as text
		name string
		port int
	}
	byNet := map[string][]listener{}
	take := func(network, key string, a Address) {
		host, p, err := net.SplitHostPort(string(a))
		// The port as Go listens on it: "+9273" and "09273" are 9273,
		// "00" is a free port.
		port, perr := strconv.Atoi(p)
		if err != nil || perr != nil || port == 0 {
			return
		}
		l := listener{key: key, name: host, port: port}
		if host == "" {
			l.host = netip.IPv6Unspecified()
		} else if ip, err := netip.ParseAddr(host); err == nil {
			l.host = ip.Unmap()
		} else if strings.EqualFold(host, "localhost") {
			// Go listens on localhost's first address, 127.0.0.1:
			// "localhost:9273" and "127.0.0.1:9273" are one port.
			l.host = netip.AddrFrom4([4]byte{127, 0, 0, 1})
		}
		for _, o := range byNet[network] {
			if o.port == l.port && overlap(o.host, o.name, l.host, l.name) {
				add(key, "%s and %s both listen on %s port %d", o.key, key, network, port)
				return
			}
		}
		byNet[network] = append(byNet[network], l)
	}
	for _, l := range c.Listeners() {
		take(l.Network, l.Key, l.Address)
	}
}

// Listener is a listen address the config sets.
type Listener struct {
	// Key is where: "http.listen", "syslog.listeners[2]",
	// "syslog (default listener)"; Line reports its line.
	Key     string
	Network string // tcp or udp
	Address Address
}

// Listeners lists the addresses weir run listens on, those not "off":
// for check to compare, and for run to name the setting of one it cannot
// listen on.
func (c *Config) Listeners() []Listener {
	var out []Listener
	take := func(network, key string, a Address) {
		if a.Enabled() {
			out = append(out, Listener{Key: key, Network: network, Address: a})
		}
	}
	take("tcp", "http.listen", c.HTTP.Listen)
	if len(c.Broker.Kafka.Brokers) == 0 {
		take("tcp", "broker.kafka_listen", c.Broker.KafkaListen)
	}
	if c.Syslog.Enabled == nil || *c.Syslog.Enabled {
		for i, l := range c.Syslog.Listeners {
			network := "tcp"
			if l.Protocol == "udp" {
				network = "udp"
			}
			take(network, fmt.Sprintf("syslog.listeners[%d]", i), l.Address)
		}
		if len(c.Syslog.Listeners) == 0 {
			// The collector's own, with none configured.
			take("udp", "syslog (default listener)", DefaultSyslogListen)
			take("tcp", "syslog (default listener)", DefaultSyslogListen)
		}
	}
	take("udp", "snmp.traps.listen", c.SNMP.Traps.Listen)
	for i, s := range c.Sinks {
		if s.Type == "prometheus" {
			take("tcp", fmt.Sprintf("sinks[%d].listen", i), s.Listen)
		}
	}
	return out
}

// overlap: two listen hosts that cannot both bind one port.
func overlap(a netip.Addr, aName string, b netip.Addr, bName string) bool {
	if a.IsValid() && b.IsValid() {
		return a == b || a.IsUnspecified() || b.IsUnspecified()
	}
	if a.IsValid() && a.IsUnspecified() || b.IsValid() && b.IsUnspecified() {
		return true
	}
	return aName == bName
}
