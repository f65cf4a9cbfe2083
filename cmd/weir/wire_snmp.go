package main

import (
	"log/slog"
	"path/filepath"

	"github.com/weirnet/weir/collectors/snmp"
	"github.com/weirnet/weir/collectors/trap"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/telemetry"
)

// snmpComponents builds the SNMP poller and trap receiver from the config:
// the poller always (with no targets it waits for a SIGHUP that adds
// some), the trap receiver unless traps.listen is "off".
func snmpComponents(d deps) ([]component, error) {
	c := d.cfg.SNMP
	profiles, err := c.LoadSNMPProfiles()
	if err != nil {
		return nil, err
	}
	var out []component
	m, err := snmp.NewMetrics(d.reg)
	if err != nil {
		return nil, err
	}
	var owner func(string) bool
	if d.shard != nil {
		owner = d.shard.Owns
	}
	var deviceName func(target, host string) string
	if d.names != nil {
		// Keyed by the device's name as enrichment gives it.
		deviceName = d.names.namer.SNMPTarget
	}
	p, err := snmp.New(snmp.Config{
		Targets:        c.Targets,
		Profiles:       profiles,
		MaxConcurrency: c.MaxConcurrency,
		Topic:          c.Topic,
		Broker:         d.broker,
		Logger:         d.logger.With(slog.String("component", "snmp")),
		Metrics:        m,
		Owner:          owner,
		DeviceName:     deviceName,
		StateFile:      filepath.Join(d.cfg.DataDir, "snmp", "targets.json"),
	})
	if err != nil {
		return nil, err
	}
	// The profiles are read again with the file: a target whose
	// profiles were edited restarts with them.
	d.reload.add(partSNMPTargets, func(cfg *configs.Config) error {
		profiles, err := cfg.SNMP.LoadSNMPProfiles()
		if err != nil {
			return err
		}
		return p.Reload(profiles, cfg.SNMP.Targets)
	})
	out = append(out, component{name: "snmp", run: p.Run})
	if c.Traps.Listen.Enabled() {
		m, err := trap.NewMetrics(d.reg)
		if err != nil {
			return nil, err
		}
		var deviceName func(*telemetry.Trap) string
		if d.names != nil {
			deviceName = d.names.namer.TrapDevice
		}
		r, err := trap.New(trap.Config{
			Listen:      string(c.Traps.Listen),
			Communities: c.Traps.Communities,
			Users:       c.Traps.Users,
			Topic:       c.Traps.Topic,
			EngineID:    c.Traps.EngineID,
			StateFile:   filepath.Join(d.cfg.DataDir, "trap", "engine.json"),
			Broker:      d.broker,
			Names:       trap.NewNames(profiles),
			Logger:      d.logger.With(slog.String("component", "trap")),
			Metrics:     m,
			DeviceName:  deviceName,
		})
		if err != nil {
			return nil, err
		}
		d.reload.add("snmp trap names", func(cfg *configs.Config) error {
			profiles, err := cfg.SNMP.LoadSNMPProfiles()
			if err != nil {
				return err
			}
			r.SetNames(trap.NewNames(profiles))
			return nil
		})
		d.reload.add("snmp trap access", trapAccessReload(r))
		out = append(out, component{name: "trap", run: r.Run})
	}
	return out, nil
}

// trapAccessReload applies a reloaded file's trap communities and users
// to the running receiver. A file that turns the receiver off (no snmp
// section, listen off) changes nothing: the receiver runs until the next
// start, and empty lists would have it take any community meanwhile.
func trapAccessReload(r *trap.Receiver) func(*configs.Config) error {
	return func(cfg *configs.Config) error {
		if !cfg.SNMP.Traps.Listen.Enabled() {
			return nil
		}
		return r.SetAccess(cfg.SNMP.Traps.Communities, cfg.SNMP.Traps.Users)
	}
}
