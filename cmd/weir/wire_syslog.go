package main

// syslogComponents builds the syslog collector from the config.
func syslogComponents(d deps) ([]component, error) { return nil, nil }
