package embedded

import "testing"

// TestOffsetsResyncSkipsEntriesInsideEntries: group IDs are any bytes
// a client sends (up to maxGroupNameLen). An entry whose group ID holds a
// whole, valid entry is harmless while the file reads in order, but when
// that entry is damaged (bit rot, a torn write), replayOffsets resyncs at
// every byte after its start and applies the entry found inside it: a
// commit nobody made for another group.
func TestOffsetsResyncSkipsEntriesInsideEntries(t *testing.T) {
	victim := groupKey{group: "weir-sink-prom", topic: "enriched.metrics", partition: 0}
	inner := appendOffsetEntry(nil, victim, 1<<40)
	outer := appendOffsetEntry(nil, groupKey{group: "x" + string(inner), topic: "t", partition: 0}, 5)
	later := appendOffsetEntry(nil, groupKey{group: "g", topic: "t", partition: 0}, 7)
	b := append(append([]byte{}, outer...), later...)
	b[4] ^= 1 // the outer entry's CRC
	m := map[groupKey]int64{}
	replayOffsets(b, m)
	if off, ok := m[victim]; ok {
		t.Fatalf("replay applied a commit of %v to offset %d found inside a damaged entry's group ID", victim, off)
	}
}
