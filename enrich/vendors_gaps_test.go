package enrich

import "testing"

// TestDeviceLinesCiscoConfigByLine: IOS without a logged-in user (no AAA,
// a line password) names the line that configured it, "Configured from
// console by vty2 (10.34.195.36)" or "by console" (the example in Cisco's
// configuration guides, "Configuring System Message Logging"). The line is
// no user: the change is the address's, or the line's where none is given.
func TestDeviceLinesCiscoConfigByLine(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "vty", raw: "<189>123: r1: Nov 29 14:02:11.123 UTC: %SYS-5-CONFIG_I: Configured from console by vty2 (10.34.195.36)",
			vendor: VendorCiscoIOS, event: "config_changed", object: "10.34.195.36", fields: map[string]string{"user": ""}},
		{name: "console", raw: "<189>124: r1: Nov 29 14:02:11.123 UTC: %SYS-5-CONFIG_I: Configured from console by console",
			vendor: VendorCiscoIOS, event: "config_changed", object: "console", fields: map[string]string{"user": ""}},
		{name: "memory", raw: "<189>125: Nov 29 14:02:11: %SYS-5-CONFIG_I: Configured from memory by console",
			vendor: VendorCiscoIOS, event: "config_changed", object: "memory", fields: map[string]string{"user": ""}},
		// A user whose name starts like a line's is still the user.
		{name: "user_vty_like", raw: "<189>126: Nov 29 14:02:11: %SYS-5-CONFIG_I: Configured from console by vtyadmin on vty0 (10.0.0.5)",
			vendor: VendorCiscoIOS, event: "config_changed", object: "vtyadmin"},
	})
}
