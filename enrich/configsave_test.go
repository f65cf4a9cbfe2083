package enrich

import (
	"testing"
	"time"
)

// TestConfigSavedIsNoChange: Huawei's HWCM/5/TRAPLOG and Comware's
// CFGMAN_CFGCHANGED log each hwCfgManEventlog / hh3cCfgManEventlog,
// whose ConfigSource and ConfigDestination are the MIBs' data
// (HUAWEI-CONFIG-MAN-MIB, HH3C-CONFIG-MAN-MIB: runningData(2),
// startupData(4)). A save (running to startup) changes no configuration,
// as ciscoConfigManEvent's does not (enrich/README.md): no
// config_changed; a change of the running configuration is one.
func TestConfigSavedIsNoChange(t *testing.T) {
	for _, c := range []struct {
		line string
		want int
	}{
		{"<189>Sep 15 2026 21:12:21 HSW2 %%01HWCM/5/TRAPLOG(l)[51]:OID 1.3.6.1.4.1.2011.6.10.2.1 configure changed. (EventIndex=7, CommandSource=1, ConfigSource=2, ConfigDestination=4)", 0},
		{"<189>Sep 15 2026 21:12:21 HSW2 %%01HWCM/5/TRAPLOG(l)[52]:OID 1.3.6.1.4.1.2011.6.10.2.1 configure changed. (EventIndex=8, CommandSource=1, ConfigSource=3, ConfigDestination=2)", 1},
		{"<189>Dec 17 16:49:54 2019 sw %%10CFGMAN/5/CFGMAN_CFGCHANGED: -EventIndex=13-CommandSource=1-ConfigSource=2-ConfigDestination=4; Configuration is changed.", 0},
		{"<189>Dec 17 16:49:54 2019 sw %%10CFGMAN/5/CFGMAN_CFGCHANGED: -EventIndex=12-CommandSource=2-ConfigSource=4-ConfigDestination=2; Configuration is changed.", 1},
	} {
		if evs := syslogLineEvents(t, time.Hour, c.line); len(evs) != c.want {
			t.Errorf("%s: %d events %+v, want %d", c.line, len(evs), evs, c.want)
		}
	}
}
