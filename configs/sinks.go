package configs

// Sink configures one sink (sinks/<type>); see the sinks package.
type Sink struct{}
