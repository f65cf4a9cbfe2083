package main

// gnmiComponents builds the gNMI collector from the config.
func gnmiComponents(d deps) ([]component, error) { return nil, nil }
