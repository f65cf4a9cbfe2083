package configs

// Enrich configures the enrichment workers (enrich).
type Enrich struct {
	// Enabled turns enrichment off with false; on by default.
	Enabled *bool `yaml:"enabled"`
	// Workers is how many members of the "enrich" group run in this
	// process; default 2.
	Workers int `yaml:"workers"`
	// Inventory is the device inventory file (YAML); optional.
	Inventory string `yaml:"inventory"`
	// SyslogRules is a file of the site's own syslog rules (YAML, see
	// configs/syslog-rules.example.yaml), tried before weir's; optional.
	SyslogRules string `yaml:"syslog_rules"`
	// DedupWindow publishes the same event (device, object, type) once
	// within it; default 30s.
	DedupWindow Duration `yaml:"dedup_window"`
	// Flap raises interface_flapping / bgp_peer_flapping.
	Flap Flap `yaml:"flap"`
	// Warmup is how far back (by record time) a metrics worker reads a
	// partition it takes, to have the rates and states it would have had
	// running all along; default 10m. 0s turns warm-up off, also the
	// syslog and trap workers', which read back the flap window.
	Warmup *Duration `yaml:"warmup"`
}

// Flap: more than Threshold state changes of one object within Window is
// flapping; default 5 in 10m. Threshold -1 turns it off.
type Flap struct {
	Threshold int      `yaml:"threshold"`
	Window    Duration `yaml:"window"`
}

// EnrichEnabled reports whether enrichment runs.
func (c *Config) EnrichEnabled() bool { return c.Enrich.Enabled == nil || *c.Enrich.Enabled }

func (e *Enrich) validate(add func(path, format string, args ...any)) {
	if e.Workers < 0 || e.Workers > 64 {
		add("enrich.workers", "must be between 1 and 64 (0 or no value: 2), not %d", e.Workers)
	}
	if e.DedupWindow < 0 {
		add("enrich.dedup_window", "must not be negative (0s or no value: 30s)")
	}
	if e.Flap.Window < 0 {
		add("enrich.flap.window", "must not be negative (0s or no value: 10m)")
	}
	if e.Flap.Threshold < -1 {
		add("enrich.flap.threshold", "must be at least 1, or -1 to turn flap detection off (0 or no value: 5)")
	}
	if e.Warmup != nil && *e.Warmup < 0 {
		add("enrich.warmup", "must not be negative (0s turns warm-up off)")
	}
}
