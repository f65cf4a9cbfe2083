package configs

// SNMP configures the SNMP poller and trap receiver (collectors/snmp,
// collectors/trap).
type SNMP struct{}
