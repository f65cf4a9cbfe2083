// Package telemetry is the vocabulary of records that travel on weir's
// topics: Metric (raw.snmp, raw.gnmi, enriched.metrics), Log (raw.syslog,
// enriched.syslog), Trap (raw.traps) and Event (events). Collectors write
// them, enrichment reads and rewrites them, sinks read them.
//
// Values are JSON, one object per record, with a "v" field giving the
// schema version. Every record also carries two headers: "source" (the
// collector that made it, e.g. "syslog") and "schema" (record type and
// version, e.g. "log/1"), so a consumer can route without parsing the value.
// The record key is the device name (inventory name, else sysName or
// hostname, else source IP), which keeps one device's records in order in
// one partition.
package telemetry

import "time"

// Version is the schema version of every type in this package.
const Version = 1

// Header keys every record carries.
const (
	HeaderSource = "source"
	HeaderSchema = "schema"
)

// Schema header values.
const (
	SchemaMetric = "metric/1"
	SchemaLog    = "log/1"
	SchemaTrap   = "trap/1"
	SchemaEvent  = "event/1"
)

// Default topic names; all are configurable.
const (
	TopicRawSNMP         = "raw.snmp"
	TopicRawTraps        = "raw.traps"
	TopicRawSyslog       = "raw.syslog"
	TopicRawGNMI         = "raw.gnmi"
	TopicEnrichedMetrics = "enriched.metrics"
	TopicEnrichedSyslog  = "enriched.syslog"
	TopicEvents          = "events"
	// TopicDeadLetter holds records a sink's destination refused for good.
	TopicDeadLetter = "dead.letter"
)

// The measurements that say whether a collector reaches its target, which
// enrichment makes device_unreachable and device_reachable events of:
// an SNMP poll's (snmp_up, and error when it failed) and a gNMI target's
// attempts that failed and the first session after (gnmi_up, error). Either
// with the one field removed (true) says a reload or a start found the
// target taken out of the config.
const (
	MeasurementSNMPStatus = "snmp_status"
	MeasurementGNMIStatus = "gnmi_status"
)

// Metric is one measurement: the measurement / tags / fields / timestamp
// model that InfluxDB line protocol and Prometheus both map from. One SNMP
// table row, one gNMI notification's leaves under one path, one scalar set.
type Metric struct {
	V           int               `json:"v"`
	Measurement string            `json:"measurement"`
	Device      string            `json:"device"`
	Tags        map[string]string `json:"tags,omitempty"`
	// Fields hold int64, uint64, float64, bool or string values. Counter
	// fields are marked in Counters so sinks can type them.
	Fields   map[string]any `json:"fields"`
	Counters []string       `json:"counters,omitempty"`
	// Counters64 are the counters known to be 64 bits wide (SNMP
	// Counter64): one that goes back was reset, it did not wrap at 2^32.
	// Counters not listed may be either (a rate guesses from the values).
	Counters64 []string `json:"counters64,omitempty"`
	// Time is when the device measured (gNMI timestamp) or the poll
	// time; ReceivedAt when weir got it.
	Time       time.Time `json:"time"`
	ReceivedAt time.Time `json:"received_at"`
	// Uptime is the device's sysUpTime in hundredths of a second at the
	// poll, so downstream rate computation can detect counter resets.
	Uptime uint32 `json:"uptime,omitempty"`
	Source string `json:"source"`
}

// Log is one syslog message, parsed as far as it parses. Every header field
// is kept, with the raw bytes, who sent it and when it arrived. A message
// that does not parse still becomes a Log, with Format "malformed",
// ParseError set and the raw text as Message.
type Log struct {
	V int `json:"v"`
	// Device is the key: the hostname the message carries, else the
	// sender's IP address (inventory names come with enrichment).
	Device string `json:"device"`
	// Format is rfc5424, rfc3164, cisco or malformed.
	Format string `json:"format"`
	// Facility and Severity come from PRI; -1 when the message had none
	// (and decoded from a record that has no such key: see DecodeLog).
	Facility int `json:"facility"`
	Severity int `json:"severity"`
	// Time is the device's timestamp, when the message has one.
	Time     *time.Time `json:"time,omitempty"`
	Hostname string     `json:"hostname,omitempty"`
	// Relay is the host name in the header of a relay that read the
	// device's line from a file (rsyslog imfile, logger -f) and put its own
	// header in front: the fields above are the device's header, behind it.
	Relay          string                       `json:"relay,omitempty"`
	AppName        string                       `json:"app_name,omitempty"`
	ProcID         string                       `json:"proc_id,omitempty"`
	MsgID          string                       `json:"msg_id,omitempty"`
	StructuredData map[string]map[string]string `json:"structured_data,omitempty"`
	// Sequence is the Cisco message sequence number, when present.
	Sequence string `json:"sequence,omitempty"`
	Message  string `json:"message"`
	// Raw is the message as received. JSON strings hold only UTF-8, so
	// when the bytes are not valid UTF-8 Raw has U+FFFD in their place
	// and RawBytes (base64 in JSON) holds them exactly.
	Raw        string    `json:"raw"`
	RawBytes   []byte    `json:"raw_bytes,omitempty"`
	ParseError string    `json:"parse_error,omitempty"`
	SourceAddr string    `json:"source_addr"`
	Listener   string    `json:"listener"`
	ReceivedAt time.Time `json:"received_at"`
}

// EnrichedLog is a Log with what enrichment learned: the vendor, the
// mnemonic, the objects the message is about, the event it reports, and
// the device's inventory tags. Published to enriched.syslog.
type EnrichedLog struct {
	Log
	Vendor       string `json:"vendor"`
	SeverityName string `json:"severity_name,omitempty"`
	FacilityName string `json:"facility_name,omitempty"`
	// MnemonicFacility, MnemonicSeverity and Mnemonic split a Cisco-style
	// "%FAC-SEV-MNEMONIC"; Mnemonic alone holds a Junos event tag.
	MnemonicFacility string `json:"mnemonic_facility,omitempty"`
	MnemonicSeverity *int   `json:"mnemonic_severity,omitempty"`
	Mnemonic         string `json:"mnemonic,omitempty"`
	// Fields hold interface, neighbor, user, vrf, asn, source where the
	// message names them.
	Fields map[string]string `json:"fields,omitempty"`
	Event  string            `json:"event,omitempty"`
	// Tags are the device's inventory attributes (site, region, role,
	// vendor, platform and free tags); "unknown": "true" when the
	// device is not in the inventory.
	Tags map[string]string `json:"tags,omitempty"`
}

// Trap is one SNMP notification (trap or inform), in the v2 form: v1 traps
// are converted per RFC 3584.
type Trap struct {
	V       int    `json:"v"`
	Device  string `json:"device"`
	Version string `json:"version"` // 1, 2c, 3
	Inform  bool   `json:"inform,omitempty"`
	// TrapOID is snmpTrapOID.0; TrapName its name where known.
	TrapOID   string    `json:"trap_oid"`
	TrapName  string    `json:"trap_name,omitempty"`
	Uptime    uint32    `json:"uptime"`
	Varbinds  []Varbind `json:"varbinds"`
	Community string    `json:"community,omitempty"`
	User      string    `json:"user,omitempty"`
	// EngineID (hex) and SecurityLevel (noAuthNoPriv, authNoPriv,
	// authPriv) of a v3 notification: the sending engine tells apart
	// devices behind one address that share a user.
	EngineID      string    `json:"engine_id,omitempty"`
	SecurityLevel string    `json:"security_level,omitempty"`
	SourceAddr    string    `json:"source_addr"`
	ReceivedAt    time.Time `json:"received_at"`
}

// Varbind is one variable of a trap.
type Varbind struct {
	OID   string `json:"oid"`
	Name  string `json:"name,omitempty"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Event is a state change enrichment recognised: a link went down, a BGP
// session came up, an interface is flapping.
type Event struct {
	V int `json:"v"`
	// Type is interface_down, interface_up, bgp_peer_down, bgp_peer_up,
	// ospf_neighbor_down, ospf_neighbor_up, config_changed,
	// login_succeeded, login_failed, device_rebooted, device_unreachable,
	// device_reachable, device_unreachable_cleared (the target was taken
	// out of the config), device_renamed (Object is the old name, see
	// TypeDeviceRenamed), interface_flapping, bgp_peer_flapping, or a
	// flapping type with the suffix _cleared.
	Type   string `json:"type"`
	Device string `json:"device"`
	// Object is what the event is about: an interface name, a neighbor
	// address, a user, as the path that reported it spells it.
	Object string `json:"object,omitempty"`
	// ObjectID is Object in the one spelling every path's events of that
	// object share (an interface's name abbreviated, its type in lower
	// case: gi0/1 for GigabitEthernet0/1 and Gi0/1; an IPv6 neighbor in
	// RFC 5952's lower case), set by enrichment: key alerts and join a
	// down to its up on it.
	ObjectID string `json:"object_id,omitempty"`
	// Severity is a syslog severity name (SeverityNames): the line's, or
	// for an event of another path one by its type.
	Severity string            `json:"severity,omitempty"`
	Message  string            `json:"message,omitempty"`
	Tags     map[string]string `json:"tags,omitempty"`
	Count    int               `json:"count,omitempty"`
	Time     time.Time         `json:"time"`
	// Cause locates the record that caused the event.
	Cause Cause `json:"cause"`
	// TagsJSON, when set, is Tags encoded by AppendMarshalTagsField:
	// enrichment encodes a device's tags once, and AppendJSON copies them
	// instead of sorting and escaping them for every event.
	TagsJSON []byte `json:"-"`
}

// Cause is a record's position in the log.
type Cause struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

// SeverityNames name syslog severities 0-7 as enrichment writes them in a
// log's severity_name and an event's severity.
var SeverityNames = [8]string{"emergency", "alert", "critical", "error", "warning", "notice", "informational", "debug"}
