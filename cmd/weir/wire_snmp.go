package main

// snmpComponents builds the SNMP poller and trap receiver from the config.
func snmpComponents(d deps) ([]component, error) { return nil, nil }
