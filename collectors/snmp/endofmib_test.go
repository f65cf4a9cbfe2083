package snmp

import (
	"testing"

	"github.com/gosnmp/gosnmp"
)

// TestWalkNoSuchNameEndsTheTableV2c: some agents answer a v2c GETBULK past
// the end of their MIB with error-status noSuchName (SNMPv1's end of the
// MIB view) instead of endOfMibView. snmpbulkwalk and gosnmp's own walk
// take it as the end; weir failed the whole poll, and published nothing of
// a device whose tables it had read.
func TestWalkNoSuchNameEndsTheTableV2c(t *testing.T) {
	addr := tableAgent(t, func(from int, reps uint32) *gosnmp.SnmpPacket {
		if from >= 7 {
			return &gosnmp.SnmpPacket{Error: gosnmp.NoSuchName, ErrorIndex: 1}
		}
		return &gosnmp.SnmpPacket{Variables: rowsFrom(from, min(int(reps), 7-from))}
	})
	rows, st, err := pollTable(t, addr, nil)
	if err != nil || rows != 7 || st["snmp_up"] != float64(1) {
		t.Fatalf("err %v, %d rows (want 7), status %v", err, rows, st)
	}
}
