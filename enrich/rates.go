package enrich

import (
	"math"
	"time"
)

// counterSample is the last value seen of one counter series.
type counterSample struct {
	value  uint64
	at     time.Time
	uptime uint32 // sysUpTime (hundredths of a second) at the sample; 0 unknown
	seen   int64  // weir's clock (Unix seconds) when it arrived, for forget
}

// rates turns counter samples into per-second rates. A series is a device,
// a row (tags) and a field; samples come from one worker, in order per
// device since a device's records are in one partition.
//
//   - The first sample of a series gives no rate.
//   - A sample not newer than the last (a replay, or out of order) is
//     ignored and gives no rate.
//   - sysUpTime going back means the device restarted: the counter started
//     again, so no rate (not a huge spike) and the sample becomes the base.
//   - A decrease without a restart is a wrap when it fits the counter's
//     width: a last value that fits in 32 bits and a 32-bit wrap that is
//     less than half the range is a 32-bit counter wrapping; likewise for
//     64 bits. Anything else is a reset: no rate.
//   - Missed polls just make the interval longer; the rate is still right.
type rates struct {
	last map[counterKey]counterSample
	// now is weir's clock, set once per batch (setNow): samples are
	// forgotten by when they arrived, not by their own time, which is the
	// device's for gNMI and may be hours off.
	now int64
}

// setNow sets the arrival time stamped on the samples that follow.
func (r *rates) setNow(t time.Time) { r.now = t.Unix() }

// counterKey names a counter series: a row and a field.
type counterKey struct{ row, field string }

func newRates() *rates { return &rates{last: map[counterKey]counterSample{}} }

// observe records a sample of a row's counter field and returns the rate
// since the previous one.
func (r *rates) observe(row, field string, value uint64, at time.Time, uptime uint32) (float64, bool) {
	key := counterKey{row, field}
	prev, ok := r.last[key]
	if ok && !at.After(prev.at) {
		return 0, false
	}
	r.last[key] = counterSample{value: value, at: at, uptime: uptime, seen: r.now}
	if !ok {
		return 0, false
	}
	if uptime != 0 && prev.uptime != 0 && uptime < prev.uptime && prev.uptime-uptime < 1<<31 {
		return 0, false // restarted: sysUpTime went back
	}
	var delta uint64
	switch {
	case value >= prev.value:
		delta = value - prev.value
	case prev.value <= math.MaxUint32 && uint32(value-prev.value) < 1<<31 && value <= math.MaxUint32:
		delta = uint64(uint32(value - prev.value)) // 32-bit wrap
	case value-prev.value < 1<<63:
		delta = value - prev.value // 64-bit wrap
	default:
		return 0, false // a reset without a sysUpTime to show it
	}
	secs := at.Sub(prev.at).Seconds()
	return float64(delta) / secs, true
}

// forget drops series no sample arrived for since cutoff (weir's clock),
// so memory follows the live devices.
func (r *rates) forget(cutoff time.Time) {
	c := cutoff.Unix()
	for k, s := range r.last {
		if s.seen < c {
			delete(r.last, k)
		}
	}
}
