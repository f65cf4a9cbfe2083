// Package enrich turns raw records into enriched ones: it recognises
// vendor syslog messages (Cisco IOS/IOS-XE/NX-OS/IOS-XR, Junos, Arista EOS,
// Fortinet, and the common link, BGP, OSPF and login messages of Huawei
// VRP, Nokia SR OS, Aruba, Extreme, MikroTik and Palo Alto), splits out
// their mnemonic, facility and severity, extracts interfaces, neighbors,
// users, VRFs and AS numbers, and derives network events.
package enrich

import (
	"regexp"
	"strings"

	"github.com/weirnet/weir/telemetry"
)

// Vendors detect reports.
const (
	VendorCiscoIOS   = "cisco_ios"
	VendorCiscoNXOS  = "cisco_nxos"
	VendorCiscoIOSXR = "cisco_iosxr"
	VendorJunos      = "junos"
	VendorAristaEOS  = "arista_eos"
	VendorFortinet   = "fortinet"
	VendorHuawei     = "huawei_vrp"
	VendorGeneric    = "generic"
)

// SyslogInfo is what Classify learns from one message.
type SyslogInfo struct {
	Vendor string
	// Mnemonic parts of a "%FAC-SEV-MNEMONIC" (Cisco family, Arista)
	// or the Junos event tag ("BGP_PEER_STATE_CHANGE").
	Facility, Mnemonic string
	MnemonicSeverity   int // -1 if none
	Fields             map[string]string
	Event              string
	Rule               string
}

// Classifier applies the rule table. It is safe for concurrent use.
type Classifier struct {
	rules []rule
}

// NewClassifier compiles the built-in rules.
func NewClassifier() *Classifier { return &Classifier{rules: syslogRules()} }

var (
	mnemonicRE = regexp.MustCompile(`%(?:%\d+)?([A-Z][A-Z0-9_]*(?:-[A-Z][A-Z0-9_]*)*)-(\d)-([A-Z][A-Z0-9_]*)`)
	junosTagRE = regexp.MustCompile(`^([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?::|$)`)
)

var junosDaemons = map[string]bool{
	"mib2d": true, "rpd": true, "mgd": true, "chassisd": true, "dcd": true, "kmd": true,
	"eventd": true, "jddosd": true, "bfdd": true, "lacpd": true, "ppmd": true, "alarmd": true,
}

// text is what rules match: the message, with the RFC 5424 MSGID in front
// when Junos puts its event tag there.
func text(l *telemetry.Log) string {
	if l.MsgID != "" && junosTagRE.MatchString(l.MsgID) {
		return l.MsgID + ": " + l.Message
	}
	return l.Message
}

// Classify recognises one log message.
func (c *Classifier) Classify(l *telemetry.Log) SyslogInfo {
	info := SyslogInfo{MnemonicSeverity: -1}
	msg := text(l)
	var m []string
	if pct := strings.IndexByte(msg, '%'); pct >= 0 {
		m = mnemonicRE.FindStringSubmatch(msg[pct:])
	}
	info.Vendor = detectVendor(l, msg, m != nil)
	if m != nil {
		info.Facility, info.Mnemonic = m[1], m[3]
		info.MnemonicSeverity = int(m[2][0] - '0')
	} else if t := junosTagRE.FindStringSubmatch(msg); t != nil {
		info.Mnemonic = t[1]
	}
	for i := range c.rules {
		r := &c.rules[i]
		if r.needs != "" && !strings.Contains(msg, r.needs) {
			continue
		}
		fields, event, ok := r.apply(msg)
		if !ok {
			continue
		}
		info.Fields, info.Event, info.Rule = fields, event, r.name
		break
	}
	return info
}

// apply matches the rule and derives its event ("" when the rule matches
// but the change is not one, such as a BGP session going Idle → Connect).
func (r *rule) apply(msg string) (map[string]string, string, bool) {
	var fields map[string]string
	for _, p := range r.patterns {
		m := p.FindStringSubmatch(msg)
		if m == nil {
			return nil, "", false
		}
		for i, name := range p.SubexpNames() {
			if name == "" || m[i] == "" {
				continue
			}
			if fields == nil {
				fields = make(map[string]string, 4)
			}
			fields[name] = m[i]
		}
	}
	event := r.event
	switch {
	case r.states != nil:
		event = r.states[strings.ToLower(fields["state"])]
	case r.upState != "":
		old, now := strings.ToLower(fields["old"]), strings.ToLower(fields["new"])
		switch {
		case now == r.upState && old != r.upState:
			event = r.up
		case old == r.upState && now != r.upState:
			event = r.down
		case old == "" && now != "" && now != r.upState:
			event = r.down // only the new state is reported (Huawei)
		}
	}
	// State groups are how the rule decides, not facts for the record.
	delete(fields, "state")
	return fields, event, true
}

func detectVendor(l *telemetry.Log, msg string, hasMnemonic bool) string {
	switch {
	case strings.Contains(msg, "devname=") && strings.Contains(msg, "logid="):
		return VendorFortinet
	case strings.HasPrefix(msg, "%%") || strings.Contains(msg, "%%01"):
		return VendorHuawei
	case l.StructuredData != nil && hasJunosSD(l.StructuredData), junosDaemons[l.AppName]:
		return VendorJunos
	}
	if !hasMnemonic {
		if junosTagRE.MatchString(msg) && l.AppName != "" {
			return VendorJunos
		}
		return VendorGeneric
	}
	// The Cisco family and Arista share the %FAC-SEV-MNEMONIC body; the
	// header tells them apart.
	switch {
	case l.Format == "cisco" && l.AppName != "":
		return VendorCiscoIOSXR // "node:timestamp: process[pid]: %..."
	case l.Format == "cisco" && l.Sequence == "":
		return VendorCiscoNXOS // "<PRI>: 2026 Nov 29 ..." or "<PRI>2026 Nov 29 ... host %..."
	case l.Format == "cisco":
		return VendorCiscoIOS
	case l.AppName != "":
		return VendorAristaEOS // "host Ebra: %LINEPROTO-5-UPDOWN: ..."
	}
	return VendorCiscoIOS
}

func hasJunosSD(sd map[string]map[string]string) bool {
	for id := range sd {
		if strings.HasPrefix(id, "junos@2636") {
			return true
		}
	}
	return false
}

// SeverityNames are syslog severities 0-7.
var SeverityNames = [8]string{"emergency", "alert", "critical", "error", "warning", "notice", "informational", "debug"}

// FacilityNames are syslog facilities 0-23.
var FacilityNames = [24]string{"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron",
	"authpriv", "ftp", "ntp", "security", "console", "solaris-cron",
	"local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"}

// ObjectOf names what an event is about: the interface of a link event, the
// neighbor of a BGP or OSPF event, the user of a login or configuration
// change.
func ObjectOf(info SyslogInfo) string {
	switch {
	case strings.HasPrefix(info.Event, "interface_"):
		return info.Fields["interface"]
	case strings.HasPrefix(info.Event, "bgp_"), strings.HasPrefix(info.Event, "ospf_"):
		return info.Fields["neighbor"]
	case info.Event == "login_succeeded", info.Event == "config_changed":
		return info.Fields["user"]
	}
	return ""
}
