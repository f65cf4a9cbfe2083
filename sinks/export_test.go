package sinks

import "github.com/weirnet/weir/broker"

// LaneOf is laneOf for the tests of package sinks_test: which records
// wait behind a stuck one.
func LaneOf(key string, n int) int { return laneOf(&broker.Record{Key: []byte(key)}, n) }
