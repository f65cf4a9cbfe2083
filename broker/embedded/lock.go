package embedded

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/dirlock"
)

// ErrLocked is returned by Open when another process has the data directory.
var ErrLocked = dirlock.ErrLocked

// producerIDs hands out idempotent producer ids that are never reused, also
// across restarts: a block of ids is reserved on disk before any is used.
type producerIDs struct {
	mu        sync.Mutex
	file      string
	next, end int64
}

const producerIDBlock = 1000

// openProducerIDs reads the reserved end. known is the highest id the
// partitions' producer states remember: without a sound file, ids start
// past it, since a new producer given a remembered id would be refused as
// out of sequence.
func openProducerIDs(dataDir string, known int64, logger *slog.Logger) (*producerIDs, error) {
	p := &producerIDs{file: filepath.Join(dataDir, "meta", "producer-ids")}
	b, err := os.ReadFile(p.file)
	switch {
	case err == nil && len(b) == 8:
		p.next = int64(binary.BigEndian.Uint64(b))
	case err == nil || errors.Is(err, os.ErrNotExist):
		p.next = 1
		if err == nil || known > 0 {
			logger.Warn("idempotent producer ids: the file of reserved ids is missing or damaged; ids start past the highest the log remembers",
				slog.String("file", p.file), slog.Int("bytes", len(b)), slog.Int64("highest_known", known))
		}
	default:
		return nil, fmt.Errorf("%w: %w", broker.ErrStorage, err)
	}
	p.next = max(p.next, known+1)
	p.end = p.next
	return p, nil
}

func (p *producerIDs) allocate() (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next == p.end {
		end := p.end + producerIDBlock
		if err := writeFileAtomic(p.file, binary.BigEndian.AppendUint64(nil, uint64(end))); err != nil {
			return -1, err
		}
		p.end = end
	}
	id := p.next
	p.next++
	return id, nil
}
