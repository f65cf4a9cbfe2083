package configs

import "fmt"

// Syslog configures the syslog collector (collectors/syslog).
type Syslog struct {
	// Enabled turns the collector off with false; on by default.
	Enabled *bool `yaml:"enabled"`
	// Listeners; with none configured, UDP and TCP on DefaultSyslogListen.
	Listeners []SyslogListener `yaml:"listeners"`
	// Topic receives the records; default raw.syslog.
	Topic string `yaml:"topic"`
}

// SyslogListener is one UDP, TCP or TLS socket.
type SyslogListener struct {
	Protocol string  `yaml:"protocol"` // udp, tcp or tls
	Address  Address `yaml:"address"`
	// TLS: the server certificate and key, and a CA to require and verify
	// client certificates with (mutual TLS).
	CertFile     string `yaml:"cert_file"`
	KeyFile      string `yaml:"key_file"`
	ClientCAFile string `yaml:"client_ca_file"`
	// MaxMessageSize bounds one message; default 64KiB, at least 480, at most 1MiB.
	// Longer lines are
	// kept truncated (and marked), longer octet-counted frames close the
	// connection.
	MaxMessageSize ByteSize `yaml:"max_message_size"`
	// MaxConnections bounds concurrent TCP/TLS connections; default 4096.
	MaxConnections int `yaml:"max_connections"`
	// MaxConnectionsPerIP bounds concurrent TCP/TLS connections from one
	// sender address; default a quarter of max_connections, so that one
	// host cannot hold them all.
	MaxConnectionsPerIP int `yaml:"max_connections_per_ip"`
	// MaxConnectionsPerIPOverrides sets another bound for some sender
	// addresses (a relay or load balancer many devices' connections come
	// through): IP address to connections.
	MaxConnectionsPerIPOverrides map[string]int `yaml:"max_connections_per_ip_overrides"`
	// IdleTimeout closes TCP/TLS connections silent for this long;
	// default 10m.
	IdleTimeout Duration `yaml:"idle_timeout"`
	// ReadBuffer is the UDP socket receive buffer (SO_RCVBUF); default
	// 8MiB. The kernel caps it at net.core.rmem_max unless weir runs as
	// root.
	ReadBuffer ByteSize `yaml:"read_buffer"`
	// Readers is the number of UDP reading goroutines; default 2.
	Readers int `yaml:"readers"`
}

// SyslogEnabled reports whether the syslog collector runs.
func (c *Config) SyslogEnabled() bool { return c.Syslog.Enabled == nil || *c.Syslog.Enabled }

func (s *Syslog) validate(add func(path, format string, args ...any)) {
	if s.Topic != "" && !validTopic(s.Topic) {
		add("syslog.topic", "invalid topic name %q", s.Topic)
	}
	if s.Listeners != nil && len(s.Listeners) == 0 && (s.Enabled == nil || *s.Enabled) {
		// "listeners: []" ran the default listeners; its writer meant none.
		add("syslog.listeners", "is empty; list listeners, or write syslog.enabled: false to run none")
	}
	for i, l := range s.Listeners {
		path := fmt.Sprintf("syslog.listeners[%d]", i)
		switch l.Protocol {
		case "udp", "tcp":
		case "tls":
			if l.CertFile == "" || l.KeyFile == "" {
				add(path, "tls needs cert_file and key_file")
			}
		default:
			add(path+".protocol", "must be udp, tcp or tls, not %q", l.Protocol)
		}
		if !l.Address.Enabled() {
			add(path+".address", "is required (host:port)")
		}
		// 0 is the default; below 480 every message would be cut (a size
		// meant in KiB, most likely).
		if l.MaxMessageSize != 0 && (l.MaxMessageSize < MinSyslogMessageSize || l.MaxMessageSize > 1<<20) {
			add(path+".max_message_size", "must be between %d bytes (what RFC 5424 requires receivers to accept) and 1MiB, not %d", MinSyslogMessageSize, int64(l.MaxMessageSize))
		}
		if l.MaxConnections < 0 {
			add(path+".max_connections", "must not be negative")
		}
		if l.MaxConnectionsPerIP < 0 {
			add(path+".max_connections_per_ip", "must not be negative")
		}
		validatePerIPOverrides(add, path+".max_connections_per_ip_overrides", l.MaxConnectionsPerIPOverrides)
		if l.Readers < 0 || l.Readers > 64 {
			add(path+".readers", "must be between 1 and 64")
		}
		if l.ReadBuffer < 0 {
			add(path+".read_buffer", "must not be negative")
		}
		if l.IdleTimeout < 0 {
			add(path+".idle_timeout", "must not be negative (0: the default, 10m)")
		}
		// Settings of another protocol would be ignored: most likely a
		// copy-paste slip, or a listener meant to be tls.
		if l.Protocol != "udp" && (l.Readers != 0 || l.ReadBuffer != 0) {
			add(path, "readers and read_buffer apply to udp listeners only")
		}
		if l.Protocol == "udp" && (l.MaxConnections != 0 || l.IdleTimeout != 0 || l.MaxConnectionsPerIP != 0 || len(l.MaxConnectionsPerIPOverrides) != 0) {
			add(path, "max_connections, max_connections_per_ip(_overrides) and idle_timeout apply to tcp and tls listeners only")
		}
		if l.Protocol != "tls" && (l.CertFile != "" || l.KeyFile != "" || l.ClientCAFile != "") {
			add(path, "cert_file, key_file and client_ca_file apply to tls listeners only")
		}
	}
}

// MinSyslogMessageSize is the smallest max_message_size: RFC 5424 (6.1)
// requires receivers to accept messages of 480 octets.
const MinSyslogMessageSize = 480

// DefaultSyslogListen is where the syslog collector listens, UDP and TCP,
// with no listeners configured.
const DefaultSyslogListen Address = "127.0.0.1:5514"
