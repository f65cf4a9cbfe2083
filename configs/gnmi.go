package configs

// GNMI configures the gNMI collector (collectors/gnmi).
type GNMI struct{}
