package snmp

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/collectors/snmp/profile"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
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

// TestEndOfMibViewMidTableFlagged: an agent that answers endOfMibView for
// a column while it still has objects after it (the next column's rows,
// or more of the column in the same GETBULK answer) stopped the walk
// early: the table is cut short, not complete. The poll still publishes
// what it read, but the partial walk is counted by reason, shown in the
// status record and logged.
func TestEndOfMibViewMidTableFlagged(t *testing.T) {
	const col2 = "1.3.6.1.4.1.9999.1.2"
	for _, c := range []struct {
		name string
		c1   func(from int) []gosnmp.SnmpPDU // the answer to a GETBULK of column 1 after row from
	}{
		{"next column has rows", func(from int) []gosnmp.SnmpPDU {
			if from >= 3 {
				return []gosnmp.SnmpPDU{{Name: fmt.Sprintf(".%s.%d", testColumn, from), Type: gosnmp.EndOfMibView}}
			}
			return rowsFrom(from, 3-from)
		}},
		{"objects after it in the same answer", func(from int) []gosnmp.SnmpPDU {
			if from >= 3 {
				return append([]gosnmp.SnmpPDU{{Name: fmt.Sprintf(".%s.%d", testColumn, from), Type: gosnmp.EndOfMibView}}, rowsFrom(from+1, 2)...)
			}
			return rowsFrom(from, 3-from)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := fakeAgent(t, func(req *gosnmp.SnmpPacket) *gosnmp.SnmpPacket {
				name := strings.TrimPrefix(req.Variables[0].Name, ".")
				switch {
				case req.PDUType == gosnmp.GetRequest:
					return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: req.Variables[0].Name, Type: gosnmp.TimeTicks, Value: uint32(1234)}}}
				case name == testColumn || strings.HasPrefix(name, testColumn+"."):
					from, _ := strconv.Atoi(strings.TrimPrefix(name, testColumn+"."))
					return &gosnmp.SnmpPacket{Variables: c.c1(from)}
				case name == col2 || strings.HasPrefix(name, col2+"."):
					return &gosnmp.SnmpPacket{Variables: col2Rows(col2, name, func(from int) gosnmp.SnmpPDU {
						return gosnmp.SnmpPDU{Name: fmt.Sprintf(".%s.%d", col2, max(from, 7)), Type: gosnmp.EndOfMibView}
					})}
				}
				return nil
			})
			metrics, capture, logs := pollTwoColumns(t, addr, col2)
			checkPartialWalks(t, metrics, capture, logs, PartialEndOfMibView, "endOfMibView", 1)
		})
	}
}

// TestEndOfMibViewEarlySnmpsim: snmpsimd's error variation (status
// endofmib on row 3 of a column) makes it end a GETBULK of the column
// early, with error-status noSuchName (snmpbulkwalk prints "End of MIB"),
// while the next column has rows: an agent none of us wrote that stops
// early is flagged, under reason no_such_name.
func TestEndOfMibViewEarlySnmpsim(t *testing.T) {
	snmptest.Require(t, "snmpsimd")
	rec := "1.3.6.1.2.1.1.3.0|67|1234\n" +
		testColumn + ".1|65|1\n" + testColumn + ".2|65|2\n" + testColumn + ".3|65:error|op=get,status=endofmib\n" + testColumn + ".4|65|4\n" +
		"1.3.6.1.4.1.9999.1.2.1|65|11\n1.3.6.1.4.1.9999.1.2.2|65|12\n1.3.6.1.4.1.9999.1.2.3|65|13\n1.3.6.1.4.1.9999.1.2.4|65|14\n"
	addr := snmptest.StartSnmpsim(t, map[string][]byte{"early": []byte(rec)})
	metrics, _ := NewMetrics(nil)
	capture := snmptest.NewCapture()
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("a", addr, func(tc *configs.SNMPTarget) {
			tc.Community = "early"
			tc.Profiles = configs.SNMPProfiles{Names: []string{"t2"}}
		})},
		Profiles: twoColumnProfile(t, "1.3.6.1.4.1.9999.1.2"), Broker: capture, Metrics: metrics,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.PollOnce(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.ToFloat64(metrics.PartialWalks.WithLabelValues("a", PartialNoSuchName)); n != 1 {
		t.Errorf("partial walks counted %v, want 1", n)
	}
	if st := statuses(t, capture.Records(), "a")[0].Fields; st["partial_walks"] != float64(1) {
		t.Errorf("status %v, want partial_walks 1", st)
	}
}

// twoColumnProfile is a profile "t2" of one table with two counter
// columns, c (testColumn) and d (col2).
func twoColumnProfile(t *testing.T, col2 string) *profile.Set {
	t.Helper()
	dir := t.TempDir()
	y := "name: t2\nmeasurement: x\ntables:\n  - measurement: tbl\n    index: [{name: idx, type: int}]\n" +
		"    columns:\n      - {name: c, oid: " + testColumn + ", type: counter}\n      - {name: d, oid: " + col2 + ", type: counter}\n"
	if err := os.WriteFile(dir+"/t2.yaml", []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := profile.Load(configs.BuiltinSNMPProfiles(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestEndOfMibViewAtTheEndNotFlagged: a table that is the last thing in
// the agent's view ends with endOfMibView; that is a complete walk.
func TestEndOfMibViewAtTheEndNotFlagged(t *testing.T) {
	addr := tableAgent(t, func(from int, reps uint32) *gosnmp.SnmpPacket {
		if from >= 7 {
			return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: fmt.Sprintf(".%s.%d", testColumn, from), Type: gosnmp.EndOfMibView}}}
		}
		return &gosnmp.SnmpPacket{Variables: rowsFrom(from, min(int(reps), 7-from))}
	})
	metrics, _ := NewMetrics(nil)
	rows, st, err := pollTable(t, addr, func(c *Config) { c.Metrics = metrics })
	if err != nil || rows != 7 || st["partial_walks"] != float64(0) {
		t.Fatalf("err %v, %d rows (want 7), status %v", err, rows, st)
	}
	if n := testutil.ToFloat64(metrics.PartialWalks.WithLabelValues("a", PartialEndOfMibView)); n != 0 {
		t.Errorf("partial walks counted %v, want 0", n)
	}
}

// TestEmptyAnswerMidTableFlagged: an agent that answers a GETBULK of a
// column with no varbinds and no error (RFC 3416 lets an agent leave out
// what does not fit its message size, all of it) while the next column
// has rows ended the walk as a complete table, with no word: the table
// was cut short in a poll that looked whole. It is flagged as a partial
// walk, reason empty_answer, as an early endOfMibView is.
func TestEmptyAnswerMidTableFlagged(t *testing.T) {
	const col2 = "1.3.6.1.4.1.9999.1.2"
	addr := fakeAgent(t, func(req *gosnmp.SnmpPacket) *gosnmp.SnmpPacket {
		name := strings.TrimPrefix(req.Variables[0].Name, ".")
		switch {
		case req.PDUType == gosnmp.GetRequest:
			return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: req.Variables[0].Name, Type: gosnmp.TimeTicks, Value: uint32(1234)}}}
		case name == testColumn || strings.HasPrefix(name, testColumn+"."):
			if from, _ := strconv.Atoi(strings.TrimPrefix(name, testColumn+".")); from < 3 {
				return &gosnmp.SnmpPacket{Variables: rowsFrom(from, 3-from)}
			}
			return &gosnmp.SnmpPacket{} // nothing, no error
		case name == col2 || strings.HasPrefix(name, col2+"."):
			return &gosnmp.SnmpPacket{Variables: col2Rows(col2, name, func(from int) gosnmp.SnmpPDU {
				return gosnmp.SnmpPDU{Name: fmt.Sprintf(".%s.%d", col2, max(from, 7)), Type: gosnmp.EndOfMibView}
			})}
		}
		return nil
	})
	metrics, capture, logs := pollTwoColumns(t, addr, col2)
	checkPartialWalks(t, metrics, capture, logs, PartialEmptyAnswer, "empty_answer", 1)
}

// TestWrappedWalkMidTableFlagged: an agent that answers a GETBULK of a
// column with an OID before the one asked, outside the column (it wraps
// to the start of its MIB, as some do where their MIB ends), ends the
// walk. It was taken for the column's end with no word: a table cut short
// mid-way, while the next column has rows, passed for whole (and one
// wrapped at once for empty). It is flagged as a partial walk, reason
// wrapped; a wrap after the last object the agent has is its end, as it
// was, and the poll is not failed for it.
func TestWrappedWalkMidTableFlagged(t *testing.T) {
	const col2 = "1.3.6.1.4.1.9999.1.2"
	wrap := gosnmp.SnmpPDU{Name: ".1.3.6.1.2.1.1.1.0", Type: gosnmp.OctetString, Value: []byte("the start of the MIB")}
	for _, c := range []struct {
		name        string
		rows1       int // column 1's rows before it wraps
		wantPartial float64
	}{
		{"mid-table", 3, 1},
		{"at once", 0, 1},
		{"at the end of the MIB", 7, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := fakeAgent(t, func(req *gosnmp.SnmpPacket) *gosnmp.SnmpPacket {
				name := strings.TrimPrefix(req.Variables[0].Name, ".")
				switch {
				case req.PDUType == gosnmp.GetRequest:
					return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: req.Variables[0].Name, Type: gosnmp.TimeTicks, Value: uint32(1234)}}}
				case name == testColumn || strings.HasPrefix(name, testColumn+"."):
					from, _ := strconv.Atoi(strings.TrimPrefix(name, testColumn+"."))
					if from < c.rows1 {
						return &gosnmp.SnmpPacket{Variables: rowsFrom(from, c.rows1-from)}
					}
					if c.rows1 == 7 { // the agent's next object is column 2's
						return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: "." + col2 + ".1", Type: gosnmp.Counter32, Value: uint(1)}}}
					}
					return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{wrap}}
				case name == col2 || strings.HasPrefix(name, col2+"."):
					return &gosnmp.SnmpPacket{Variables: col2Rows(col2, name, func(int) gosnmp.SnmpPDU { return wrap })} // wraps where its MIB ends
				}
				return nil
			})
			metrics, capture, logs := pollTwoColumns(t, addr, col2)
			checkPartialWalks(t, metrics, capture, logs, PartialWrapped, "reason=wrapped", c.wantPartial)
		})
	}
}

// checkPartialWalks checks that pollTwoColumns's poll flagged want partial
// walks of reason: counted, in the status record (the poll up), and, when
// any, logged with marker and the column.
func checkPartialWalks(t *testing.T, metrics *Metrics, capture *snmptest.Capture, logs *bytes.Buffer, reason, marker string, want float64) {
	t.Helper()
	if n := testutil.ToFloat64(metrics.PartialWalks.WithLabelValues("a", reason)); n != want {
		t.Errorf("partial walks counted %v, want %v", n, want)
	}
	if st := statuses(t, capture.Records(), "a")[0].Fields; st["partial_walks"] != want || st["snmp_up"] != float64(1) {
		t.Errorf("status %v, want partial_walks %v and snmp_up 1", st, want)
	}
	if want > 0 && (!strings.Contains(logs.String(), marker) || !strings.Contains(logs.String(), testColumn)) {
		t.Errorf("not logged: %s", logs.String())
	}
}

// pollTwoColumns polls target "a" at addr once, with twoColumnProfile's
// columns (testColumn, col2) and max-repetitions 20, and returns the
// poller's metrics, what it published and its log.
func pollTwoColumns(t *testing.T, addr, col2 string) (*Metrics, *snmptest.Capture, *bytes.Buffer) {
	t.Helper()
	metrics, _ := NewMetrics(nil)
	capture := snmptest.NewCapture()
	var logs bytes.Buffer
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("a", addr, func(tc *configs.SNMPTarget) {
			tc.Profiles = configs.SNMPProfiles{Names: []string{"t2"}}
			tc.MaxRepetitions = 20
		})},
		Profiles: twoColumnProfile(t, col2), Broker: capture, Metrics: metrics,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.PollOnce(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	return metrics, capture, &logs
}

// col2Rows answers a GETBULK of col2 from the OID name: its rows after
// the one asked, up to 7, then what the agent says past its last row
// (end, given the row asked).
func col2Rows(col2, name string, end func(from int) gosnmp.SnmpPDU) []gosnmp.SnmpPDU {
	from, _ := strconv.Atoi(strings.TrimPrefix(name, col2+"."))
	var out []gosnmp.SnmpPDU
	for i := from + 1; i <= 7; i++ {
		out = append(out, gosnmp.SnmpPDU{Name: fmt.Sprintf(".%s.%d", col2, i), Type: gosnmp.Counter32, Value: uint(i)})
	}
	return append(out, end(from))
}

// TestNoSuchObjectMidTableFlagged: noSuchObject and noSuchInstance are a
// GET's exceptions (RFC 3416 section 4.2.2); a GETBULK is answered with
// the next object or endOfMibView, which is what snmpd answers at a
// table's end and at its MIB view's. An agent that answers a column's
// GETBULK with one mid-table ended the walk (as snmpbulkwalk takes it)
// with no word, the table cut short in a poll that looked whole. It is
// flagged as a partial walk, reason no_such_object, when the poll saw
// objects after it (the next column's rows, or more in the same answer);
// at the end of the agent's MIB it is the end, not flagged.
func TestNoSuchObjectMidTableFlagged(t *testing.T) {
	const col2 = "1.3.6.1.4.1.9999.1.2"
	for _, c := range []struct {
		name        string
		typ         gosnmp.Asn1BER
		rows1       int  // column 1's rows before the exception
		more        bool // column 1's later rows after it in the same answer
		col2Rows    bool // column 2 has rows
		wantPartial float64
	}{
		{"noSuchObject, next column has rows", gosnmp.NoSuchObject, 3, false, true, 1},
		{"noSuchInstance, next column has rows", gosnmp.NoSuchInstance, 3, false, true, 1},
		{"noSuchObject, objects after it in the same answer", gosnmp.NoSuchObject, 3, true, false, 1},
		{"noSuchObject at the end of the MIB", gosnmp.NoSuchObject, 7, false, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			exception := func(from int) gosnmp.SnmpPDU {
				return gosnmp.SnmpPDU{Name: fmt.Sprintf(".%s.%d", testColumn, from), Type: c.typ}
			}
			addr := fakeAgent(t, func(req *gosnmp.SnmpPacket) *gosnmp.SnmpPacket {
				name := strings.TrimPrefix(req.Variables[0].Name, ".")
				switch {
				case req.PDUType == gosnmp.GetRequest:
					return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: req.Variables[0].Name, Type: gosnmp.TimeTicks, Value: uint32(1234)}}}
				case name == testColumn || strings.HasPrefix(name, testColumn+"."):
					from, _ := strconv.Atoi(strings.TrimPrefix(name, testColumn+"."))
					if from < c.rows1 {
						return &gosnmp.SnmpPacket{Variables: rowsFrom(from, c.rows1-from)}
					}
					vbs := []gosnmp.SnmpPDU{exception(from)}
					if c.more {
						vbs = append(vbs, rowsFrom(from+1, 2)...)
					}
					return &gosnmp.SnmpPacket{Variables: vbs}
				case name == col2 || strings.HasPrefix(name, col2+"."):
					if !c.col2Rows {
						return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: req.Variables[0].Name, Type: gosnmp.EndOfMibView}}}
					}
					return &gosnmp.SnmpPacket{Variables: col2Rows(col2, name, func(from int) gosnmp.SnmpPDU {
						return gosnmp.SnmpPDU{Name: fmt.Sprintf(".%s.%d", col2, max(from, 7)), Type: gosnmp.EndOfMibView}
					})}
				}
				return nil
			})
			metrics, capture, logs := pollTwoColumns(t, addr, col2)
			checkPartialWalks(t, metrics, capture, logs, PartialNoSuchObject, "reason=no_such_object", c.wantPartial)
		})
	}
}

// TestHealthySnmpdNothingFlagged: snmpd, polled with every built-in
// profile (tables it has, and subtrees it has not, whose walks end on
// the next object or at endOfMibView) at a small max-repetitions, so
// that answers end at every kind of boundary, over v1, v2c, v3 and a
// community whose view ends mid-MIB (CommunityIfOnly): no walk is flagged
// partial and no datagram dropped.
func TestHealthySnmpdNothingFlagged(t *testing.T) {
	agent := snmptest.StartSNMPD(t)
	set := loadProfiles(t)
	var all []string
	for _, name := range []string{"system", "if-mib", "ip", "icmp", "host-resources", "entity-sensor", "bgp4-mib",
		"cisco-cpu-memory", "juniper-cpu-memory", "arista-cpu-memory"} {
		if _, ok := set.Get(name); !ok {
			t.Fatalf("no built-in profile %q", name)
		}
		all = append(all, name)
	}
	for _, c := range []struct {
		name string
		mod  func(*configs.SNMPTarget)
	}{
		{"v1", func(tc *configs.SNMPTarget) { tc.Version = "1" }},
		{"v2c", nil},
		{"v2c view ends mid-MIB", func(tc *configs.SNMPTarget) { tc.Community = snmptest.CommunityIfOnly }},
		{"v3", v3(snmptest.V3User, snmptest.V3AuthPass, snmptest.V3PrivPass)},
	} {
		t.Run(c.name, func(t *testing.T) {
			metrics, _ := NewMetrics(nil)
			capture := snmptest.NewCapture()
			p, err := New(Config{
				Targets: []configs.SNMPTarget{testTarget("h", agent.Addr, func(tc *configs.SNMPTarget) {
					if c.mod != nil {
						c.mod(tc)
					}
					tc.Profiles.Names = all
					tc.MaxRepetitions = 3
					tc.Timeout = 5 * time.Second
				})},
				Profiles: set, Broker: capture, Metrics: metrics,
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.PollOnce(context.Background(), "h"); err != nil {
				t.Fatal(err)
			}
			if st := statuses(t, capture.Records(), "h")[0].Fields; st["partial_walks"] != float64(0) || st["varbinds"].(float64) < 100 {
				t.Errorf("status %v, want partial_walks 0 and 100 varbinds or more", st)
			}
			if n := testutil.CollectAndCount(metrics.PartialWalks); n != 0 {
				t.Errorf("%d partial walk series, want none", n)
			}
			if n := testutil.CollectAndCount(metrics.DroppedDatagrams); n != 0 {
				t.Errorf("%d dropped datagram series, want none", n)
			}
		})
	}
}
