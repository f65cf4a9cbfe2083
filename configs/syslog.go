package configs

// Syslog configures the syslog collector (collectors/syslog).
type Syslog struct {
	// Listeners; with none configured, UDP and TCP on 127.0.0.1:5514.
	Listeners []SyslogListener `yaml:"listeners"`
	// Topic receives the records; default raw.syslog.
	Topic string `yaml:"topic"`
}

// SyslogListener is one UDP, TCP or TLS socket.
type SyslogListener struct {
	Protocol string  `yaml:"protocol"` // udp, tcp or tls
	Address  Address `yaml:"address"`
}
