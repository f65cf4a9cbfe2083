package gnmi

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// memBudget is gnmi.queue_memory: the memory every target's queue holds
// together (each notification charged queueCharge, the batch being
// published included), shared by the collector's targets.
//
// Fairness: a target's share is the budget divided by the targets
// running. A target may hold more than its share only while the queues
// together hold less than three quarters of the budget; the last quarter
// is for targets under their share. So a target that floods a slow
// broker cannot take, as the others' publishing frees it, all the memory
// for ever: once over its share it gets nothing more while memory is
// short, its own publishing brings it down, and what the others free
// stays for them. Nothing queued is dropped to make room: a refused
// notification is always the newest one.
type memBudget struct {
	mu      sync.Mutex
	max     int64
	used    int64
	targets int // running: the share is max/targets
	// gauge exports used (weir_gnmi_queue_memory_bytes).
	gauge prometheus.Gauge
}

func newMemBudget(max int64, gauge prometheus.Gauge) *memBudget {
	return &memBudget{max: max, gauge: gauge}
}

// join and leave count a target running (see share).
func (b *memBudget) join() {
	b.mu.Lock()
	b.targets++
	b.mu.Unlock()
}

func (b *memBudget) leave() {
	b.mu.Lock()
	b.targets--
	b.mu.Unlock()
}

// take charges size to a target holding own bytes, or refuses it (and
// charges nothing). When nothing at all is held, one notification is
// taken however large, as an empty queue takes one: a notification
// larger than the budget is not refused for good.
func (b *memBudget) take(own, size int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	total := b.used + size
	if b.used > 0 {
		if total > b.max {
			return false
		}
		if own+size > b.share() && total > b.max/4*3 {
			return false
		}
	}
	b.used = total
	b.gauge.Set(float64(b.used))
	return true
}

// give returns size bytes, published or given up.
func (b *memBudget) give(size int64) {
	if size == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= size
	b.gauge.Set(float64(b.used))
}

// share is a target's fair share of the budget. b.mu must be held.
func (b *memBudget) share() int64 { return b.max / int64(max(b.targets, 1)) }

// state is what the budget holds, its bound, and a target's share now.
func (b *memBudget) state() (used, bound, share int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.max, b.share()
}
