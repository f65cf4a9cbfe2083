package embedded

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/weirnet/weir/broker"
)

// topic is a named set of partitions with its config.
type topic struct {
	name string
	id   [16]byte
	cfg  atomic.Pointer[broker.TopicConfig]
	// own is what the topic set itself (see ownConfig), and meta its
	// meta file's content; both change only under the broker's adminMu
	// and mu held for writing (AlterTopicConfig), and are read under
	// either.
	own        broker.TopicConfig
	meta       topicMeta
	partitions []*partition
	stats      *topicStats
}

// topicStats are counters read by the metrics collector; updated per batch,
// not per record.
type topicStats struct {
	recordsIn, bytesIn   atomic.Int64
	recordsOut, bytesOut atomic.Int64
}

func (t *topic) config() broker.TopicConfig { return *t.cfg.Load() }

// topicMeta is a topic's file under meta/topics.
type topicMeta struct {
	Name       string    `json:"name"`
	ID         string    `json:"id"`
	Partitions int32     `json:"partitions"`
	Created    time.Time `json:"created"`
	// Config as given at creation; zero fields follow the defaults.
	RetentionMs    int64 `json:"retention_ms,omitempty"`
	RetentionBytes int64 `json:"retention_bytes,omitempty"`
	SegmentBytes   int64 `json:"segment_bytes,omitempty"`
	SegmentMs      int64 `json:"segment_ms,omitempty"`
}

func metaDir(dataDir string) string { return filepath.Join(dataDir, "meta", "topics") }

func newTopicID() [16]byte {
	var id [16]byte
	rand.Read(id[:])
	id[6] = id[6]&0x0f | 0x40 // UUID v4, as Kafka's topic IDs
	id[8] = id[8]&0x3f | 0x80
	return id
}

func writeTopicMeta(dataDir string, m topicMeta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(metaDir(dataDir), m.Name+".json"), b)
}

func readTopicMetas(dataDir string) ([]topicMeta, error) {
	entries, err := os.ReadDir(metaDir(dataDir))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", broker.ErrStorage, err)
	}
	var metas []topicMeta
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".json" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(metaDir(dataDir), e.Name()))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", broker.ErrStorage, err)
		}
		var m topicMeta
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("topic metadata %s: %w", e.Name(), err)
		}
		// The name becomes directory names and the count a divisor:
		// a damaged file must stop the open, not escape the data
		// directory or panic the first produce.
		if !broker.ValidTopicName(m.Name) || m.Name+".json" != e.Name() {
			return nil, fmt.Errorf("%w: topic metadata %s: names topic %q", broker.ErrStorage, e.Name(), m.Name)
		}
		if m.Partitions < 1 {
			return nil, fmt.Errorf("%w: topic metadata %s: %d partitions", broker.ErrStorage, e.Name(), m.Partitions)
		}
		metas = append(metas, m)
	}
	return metas, nil
}

func (m topicMeta) config() broker.TopicConfig {
	return broker.TopicConfig{
		Partitions:     m.Partitions,
		RetentionTime:  time.Duration(m.RetentionMs) * time.Millisecond,
		RetentionBytes: m.RetentionBytes,
		SegmentBytes:   m.SegmentBytes,
		SegmentAge:     time.Duration(m.SegmentMs) * time.Millisecond,
	}
}

func metaFromConfig(name string, id [16]byte, cfg broker.TopicConfig) topicMeta {
	m := topicMeta{
		Name:       name,
		ID:         fmt.Sprintf("%x", id),
		Partitions: cfg.Partitions,
		Created:    time.Now().UTC(),
	}
	m.setConfig(cfg)
	return m
}

// setConfig stores cfg's config fields (not the partition count) in m.
func (m *topicMeta) setConfig(cfg broker.TopicConfig) {
	if cfg.RetentionTime < 0 {
		// For ever, as -1 (a nanosecond: configs' and Kafka's
		// retention.ms -1 alike), which whole milliseconds would turn
		// into 0, the default, at the next open.
		cfg.RetentionTime = -time.Millisecond
	}
	m.RetentionMs = cfg.RetentionTime.Milliseconds()
	m.RetentionBytes = cfg.RetentionBytes
	m.SegmentBytes = cfg.SegmentBytes
	m.SegmentMs = cfg.SegmentAge.Milliseconds()
}

// writeFileAtomic writes name through a temporary file, fsync and rename,
// so a crash leaves either the old or the new content.
func writeFileAtomic(name string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return fmt.Errorf("%w: %w", broker.ErrStorage, err)
	}
	tmp := name + ".tmp"
	if err := writeSynced(tmp, b); err != nil {
		os.Remove(tmp) // a full disk leaves no half-written file behind
		return fmt.Errorf("%w: %w", broker.ErrStorage, err)
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%w: %w", broker.ErrStorage, err)
	}
	return syncDir(filepath.Dir(name))
}

// writeSynced writes b to a new file name and syncs it.
func writeSynced(name string, b []byte) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
