package embedded

import (
	"fmt"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
)

type producerState struct {
	epoch    int16
	lastSeq  int32
	lastUsed int64 // offset of its last batch, for forgetting the oldest
	// recent remembers the last batches for duplicate detection, as
	// Kafka does (max.in.flight is at most 5 for idempotent producers).
	recent [5]seqEntry
	n      int
}

type seqEntry struct {
	first, last int32
	offset      int64
}

// checkSequence applies Kafka's idempotent producer rules. It returns
// dup=true with the original offset for a retried batch.
func (p *partition) checkSequence(h *recordbatch.Header) (dup bool, offset int64, err error) {
	st, ok := p.producers[h.ProducerID]
	if !ok {
		// Unknown producer (new, or state lost with a restart): accept.
		return false, 0, nil
	}
	switch {
	case h.ProducerEpoch < st.epoch:
		return false, 0, fmt.Errorf("%w: producer %d epoch %d < %d", broker.ErrInvalidProducerEpoch, h.ProducerID, h.ProducerEpoch, st.epoch)
	case h.ProducerEpoch > st.epoch:
		if h.BaseSequence != 0 {
			return false, 0, fmt.Errorf("%w: producer %d new epoch %d starts at sequence %d", broker.ErrOutOfOrderSequence, h.ProducerID, h.ProducerEpoch, h.BaseSequence)
		}
		return false, 0, nil
	}
	last := h.BaseSequence + h.LastOffsetDelta
	for i := 0; i < st.n; i++ {
		if e := st.recent[i]; e.first == h.BaseSequence && e.last == last {
			return true, e.offset, nil
		}
	}
	if want := nextSeq(st.lastSeq); h.BaseSequence != want {
		return false, 0, fmt.Errorf("%w: producer %d sequence %d, expected %d", broker.ErrOutOfOrderSequence, h.ProducerID, h.BaseSequence, want)
	}
	return false, 0, nil
}

func nextSeq(s int32) int32 {
	if s == 1<<31-1 {
		return 0
	}
	return s + 1
}

// maxProducers bounds the idempotent producer states a partition keeps; the
// oldest is forgotten first (and accepted as unknown if it comes back).
const maxProducers = 4096

func (p *partition) recordSequence(h *recordbatch.Header) {
	st, ok := p.producers[h.ProducerID]
	if !ok && len(p.producers) >= maxProducers {
		var oldest int64 = -1
		var oldestAt int64
		for id, s := range p.producers {
			if oldest < 0 || s.lastUsed < oldestAt {
				oldest, oldestAt = id, s.lastUsed
			}
		}
		delete(p.producers, oldest)
	}
	if !ok || h.ProducerEpoch != st.epoch {
		st = &producerState{epoch: h.ProducerEpoch}
		p.producers[h.ProducerID] = st
	}
	st.lastSeq = h.BaseSequence + h.LastOffsetDelta
	st.lastUsed = h.BaseOffset
	copy(st.recent[1:], st.recent[:4])
	st.recent[0] = seqEntry{first: h.BaseSequence, last: st.lastSeq, offset: h.BaseOffset}
	st.n = min(st.n+1, 5)
}
