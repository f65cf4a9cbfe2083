package embedded

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/weirnet/weir/broker"
)

// configNames are the config fields' Kafka names and weir.yaml keys (under
// broker.topics.NAME), for messages.
var configNames = []struct {
	field       broker.TopicConfigFields
	kafka, yaml string
}{
	{broker.RetentionTimeField, "retention.ms", "retention.time"},
	{broker.RetentionBytesField, "retention.bytes", "retention.bytes"},
	{broker.SegmentBytesField, "segment.bytes", "segment.bytes"},
	{broker.SegmentAgeField, "segment.ms", "segment.age"},
}

// PinnedTopicConfigs returns the config fields the topic's
// WithTopicConfig settings (weir.yaml's broker.topics) fix: AlterTopicConfig
// refuses to change them.
func (b *Broker) PinnedTopicConfigs(name string) broker.TopicConfigFields {
	return b.opts.topics[name].SetFields()
}

// AlterTopicConfig changes the configs topic name sets itself, those it
// was created with (Kafka's dynamic topic configs, which a Kafka client's
// AlterConfigs and IncrementalAlterConfigs change): change.Set's fields
// are set, change.Delete's removed (they follow the broker's defaults
// again), and with change.Replace every field Set does not set is removed.
// The values are checked as CreateTopics checks them: a retention time or
// size is positive or negative (for ever, no bound), a segment size from
// broker.MinSegmentBytes to broker.MaxSegmentBytes, a segment age
// positive; else the change fails with broker.ErrInvalidConfig and nothing
// changes.
//
// The change is written to the topic's meta file (through a synced
// temporary file and a rename) before it is applied, so it survives a
// restart, and it applies at once: the next append rolls by the new
// segment settings, the next retention check deletes by the new retention.
// With validateOnly it is checked and neither stored nor applied.
//
// A field the topic's WithTopicConfig settings (weir.yaml's
// broker.topics) set wins over what the topic stores, so changing it here
// would change nothing: setting it to another value, or deleting it, fails
// with broker.ErrConfigPolicy and a message naming the setting. Setting it
// to the value it has is accepted and changes nothing, so that a tool that
// sends back every config it read (Terraform, kafka-ui) can change the
// others; a Replace that does not name it leaves it as it is.
func (b *Broker) AlterTopicConfig(ctx context.Context, name string, change broker.TopicConfigChange, validateOnly bool) error {
	set := change.Set.SetFields()
	if err := checkConfigChange(change, set); err != nil {
		return fmt.Errorf("topic %s: %w", name, err)
	}
	remove := change.Delete
	if change.Replace {
		remove |= broker.AllTopicConfigFields &^ set
	}
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	if b.closed.Load() {
		return broker.ErrClosed
	}
	b.mu.RLock()
	t, ok := b.topics[name]
	b.mu.RUnlock()
	if !ok {
		return fmt.Errorf("%w: %s", broker.ErrUnknownTopic, name)
	}
	over := b.opts.topics[name]
	fixed := over.SetFields() // weir.yaml's: these win
	stored := t.meta.config()
	for _, n := range configNames {
		if !fixed.Has(n.field) {
			continue
		}
		switch {
		case set.Has(n.field) && !sameField(change.Set, over, n.field):
			return fmt.Errorf("%w: topic %s: %s is set by weir.yaml's broker.topics.%s.%s (to %s), which wins over a topic's own configs: change it there and restart",
				broker.ErrConfigPolicy, name, n.kafka, name, n.yaml, fieldText(over, n.field))
		case change.Delete.Has(n.field):
			return fmt.Errorf("%w: topic %s: %s cannot be deleted: weir.yaml's broker.topics.%s.%s sets it (to %s), and wins over a topic's own configs: remove it there and restart",
				broker.ErrConfigPolicy, name, n.kafka, name, n.yaml, fieldText(over, n.field))
		}
	}
	// What weir.yaml sets keeps its stored value: storing one here would
	// take effect, unasked, the day weir.yaml stops setting it.
	next := stored
	ch := fieldChange{fixed: fixed, set: set, remove: remove}
	applyField(ch, broker.RetentionTimeField, &next.RetentionTime, change.Set.RetentionTime)
	applyField(ch, broker.RetentionBytesField, &next.RetentionBytes, change.Set.RetentionBytes)
	applyField(ch, broker.SegmentBytesField, &next.SegmentBytes, change.Set.SegmentBytes)
	applyField(ch, broker.SegmentAgeField, &next.SegmentAge, change.Set.SegmentAge)
	if next.RetentionTime < 0 {
		next.RetentionTime = -time.Millisecond // as the meta file keeps it
	}
	if next.RetentionBytes < 0 {
		next.RetentionBytes = -1
	}
	if validateOnly || next == stored {
		return nil
	}
	m := t.meta
	m.setConfig(next)
	if err := b.writeTopicMeta(m); err != nil {
		return fmt.Errorf("topic %s: storing its configs: %w", name, err)
	}
	own := b.ownConfig(name, m.config())
	eff := mergeConfig(own, b.opts.defaults)
	b.mu.Lock()
	t.meta, t.own = m, own
	t.cfg.Store(&eff)
	b.mu.Unlock()
	b.opts.logger.Info("topic configs changed", slog.String("topic", name), slog.String("configs", ownConfigText(stored, next)))
	return nil
}

// fieldChange is which config fields a change sets and removes, and which
// weir.yaml fixes (those keep their stored value).
type fieldChange struct{ fixed, set, remove broker.TopicConfigFields }

// applyField applies ch to the stored value *dst of field f: v where ch
// sets f, 0 (the default) where it removes f.
func applyField[T time.Duration | int64](ch fieldChange, f broker.TopicConfigFields, dst *T, v T) {
	switch {
	case ch.fixed.Has(f):
	case ch.set.Has(f):
		*dst = v
	case ch.remove.Has(f):
		*dst = 0
	}
}

// checkConfigChange checks a change's values as CreateTopics does.
func checkConfigChange(change broker.TopicConfigChange, set broker.TopicConfigFields) error {
	c := change.Set
	switch {
	case c.Partitions != 0:
		return fmt.Errorf("%w: the partition count is not a config: a topic keeps the count it was created with", broker.ErrInvalidConfig)
	case set&change.Delete != 0:
		return fmt.Errorf("%w: a config is both set and deleted", broker.ErrInvalidConfig)
	case change.Delete&^broker.AllTopicConfigFields != 0:
		return fmt.Errorf("%w: unknown config field", broker.ErrInvalidConfig)
	case c.SegmentBytes != 0 && (c.SegmentBytes < broker.MinSegmentBytes || c.SegmentBytes > broker.MaxSegmentBytes):
		return fmt.Errorf("%w: segment.bytes %d: want %d (64 KiB) to %d (2 GiB)", broker.ErrInvalidConfig, c.SegmentBytes, broker.MinSegmentBytes, broker.MaxSegmentBytes)
	case c.SegmentAge < 0:
		return fmt.Errorf("%w: segment.ms: want a positive age", broker.ErrInvalidConfig)
	case c.RetentionTime > 0 && c.RetentionTime < time.Millisecond, c.SegmentAge > 0 && c.SegmentAge < time.Millisecond:
		// Kept in whole milliseconds: less would be stored as 0, the
		// default.
		return fmt.Errorf("%w: durations are kept in milliseconds: want at least 1ms", broker.ErrInvalidConfig)
	}
	return nil
}

// sameField reports whether a and b have the same value for field f, as
// the meta file would keep it (negative retentions all mean the same).
func sameField(a, b broker.TopicConfig, f broker.TopicConfigFields) bool {
	switch f {
	case broker.RetentionTimeField:
		if (a.RetentionTime < 0) != (b.RetentionTime < 0) {
			return false
		}
		return a.RetentionTime < 0 || a.RetentionTime.Milliseconds() == b.RetentionTime.Milliseconds()
	case broker.RetentionBytesField:
		return max(a.RetentionBytes, -1) == max(b.RetentionBytes, -1)
	case broker.SegmentBytesField:
		return a.SegmentBytes == b.SegmentBytes
	case broker.SegmentAgeField:
		return a.SegmentAge.Milliseconds() == b.SegmentAge.Milliseconds()
	}
	return false
}

// fieldText is cfg's value of field f in Kafka's units (milliseconds,
// bytes; -1 for ever or no bound).
func fieldText(cfg broker.TopicConfig, f broker.TopicConfigFields) string {
	var v int64
	switch f {
	case broker.RetentionTimeField:
		v = cfg.RetentionTime.Milliseconds()
		if cfg.RetentionTime < 0 {
			v = -1
		}
	case broker.RetentionBytesField:
		v = max(cfg.RetentionBytes, -1)
	case broker.SegmentBytesField:
		v = cfg.SegmentBytes
	case broker.SegmentAgeField:
		v = cfg.SegmentAge.Milliseconds()
	}
	return fmt.Sprint(v)
}

// ownConfigText says what changed between two stored configs, for the
// log: "retention.ms=3600000 segment.bytes=(default)".
func ownConfigText(old, next broker.TopicConfig) string {
	var parts []string
	for _, n := range configNames {
		if sameField(old, next, n.field) {
			continue
		}
		v := "(default)"
		if next.SetFields().Has(n.field) {
			v = fieldText(next, n.field)
		}
		parts = append(parts, n.kafka+"="+v)
	}
	return strings.Join(parts, " ")
}
