package embedded

import (
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"
)

// Collector exports the log's state as Prometheus metrics. Counters are read
// from per-topic atomics at scrape time, so the hot path pays one atomic add
// per batch and nothing per record.
func (b *Broker) Collector() prometheus.Collector { return &collector{b: b} }

var (
	descRecordsIn = prometheus.NewDesc("weir_broker_records_in_total",
		"Records appended to the log, per topic.", []string{"topic"}, nil)
	descBytesIn = prometheus.NewDesc("weir_broker_bytes_in_total",
		"Batch bytes appended to the log, per topic.", []string{"topic"}, nil)
	descRecordsOut = prometheus.NewDesc("weir_broker_records_out_total",
		"Records delivered to in-process consumers, per topic.", []string{"topic"}, nil)
	descBytesOut = prometheus.NewDesc("weir_broker_bytes_out_total",
		"Batch bytes read by consumers (in-process and Kafka clients), per topic.", []string{"topic"}, nil)
	descEndOffset = prometheus.NewDesc("weir_broker_log_end_offset",
		"Offset the next record appended to the partition gets.", []string{"topic", "partition"}, nil)
	descStartOffset = prometheus.NewDesc("weir_broker_log_start_offset",
		"First offset retained in the partition.", []string{"topic", "partition"}, nil)
	descPartBytes = prometheus.NewDesc("weir_broker_partition_bytes",
		"Bytes of segments kept for the partition.", []string{"topic", "partition"}, nil)
	descSegments = prometheus.NewDesc("weir_broker_partition_segments",
		"Segment files of the partition.", []string{"topic", "partition"}, nil)
	descLag = prometheus.NewDesc("weir_consumer_lag",
		"Records between a group's committed offset (or, for a partition it consumes without one, the log start) and the log end.", []string{"group", "topic", "partition"}, nil)
	descCommitted = prometheus.NewDesc("weir_consumer_committed_offset",
		"A group's committed offset.", []string{"group", "topic", "partition"}, nil)
	descSkipped = prometheus.NewDesc("weir_consumer_skipped_records_total",
		"Records an in-process group never read, by reason: retention (deleted before the group got to them; it went on from the log start), corrupt (their batch fails its CRC; it went on after it).", []string{"group", "topic", "reason"}, nil)
	descMembers = prometheus.NewDesc("weir_consumer_group_members",
		"Members of a consumer group, in-process and Kafka clients.", []string{"group"}, nil)
	descDiskFree = prometheus.NewDesc("weir_broker_disk_free_bytes",
		"Bytes free for weir on the file system of data_dir: the log refuses writes when it reaches 0.", nil, nil)
	descDiskSize = prometheus.NewDesc("weir_broker_disk_size_bytes",
		"Size of the file system of data_dir.", nil, nil)
	descMembersRefused = prometheus.NewDesc("weir_consumer_group_joins_refused_total",
		"Kafka clients' JoinGroups refused GROUP_MAX_SIZE_REACHED: the group had 1000 members, or all groups 10000.", nil, nil)
	descCommitsRefused = prometheus.NewDesc("weir_consumer_offset_commits_refused_total",
		"Kafka clients' OffsetCommits refused POLICY_VIOLATION: they would add a group with committed offsets when 10000 had some.", nil, nil)
	descCreatesRefused = prometheus.NewDesc("weir_broker_topic_creates_refused_total",
		"Topic creations (CreateTopics, auto-creation, weir's own topics) refused because their partitions would pass weir_broker_partitions_max; Kafka clients get POLICY_VIOLATION.", nil, nil)
	descMaxPartitions = prometheus.NewDesc("weir_broker_partitions_max",
		"Partitions all topics may have together: broker.max_partitions, or half the open-file limit.", nil, nil)
)

type collector struct{ b *Broker }

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRecordsIn, descBytesIn, descRecordsOut, descBytesOut,
		descEndOffset, descStartOffset, descPartBytes, descSegments, descLag, descCommitted, descSkipped, descMembers,
		descDiskFree, descDiskSize, descMembersRefused, descCommitsRefused, descCreatesRefused, descMaxPartitions} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	b := c.b
	if b.closed.Load() {
		return
	}
	ch <- prometheus.MustNewConstMetric(descMembersRefused, prometheus.CounterValue, float64(b.wire.refusedMembers.Load()))
	ch <- prometheus.MustNewConstMetric(descCommitsRefused, prometheus.CounterValue, float64(b.wire.refusedCommits.Load()))
	ch <- prometheus.MustNewConstMetric(descCreatesRefused, prometheus.CounterValue, float64(b.refusedCreates.Load()))
	ch <- prometheus.MustNewConstMetric(descMaxPartitions, prometheus.GaugeValue, float64(b.maxPartitions))
	// What an alert needs before the disk fills: the space this process
	// may still use (root may use the blocks reserved for it too).
	var st unix.Statfs_t
	if err := unix.Statfs(b.opts.dataDir, &st); err == nil {
		free, size := diskBytes(&st, os.Geteuid() == 0)
		ch <- prometheus.MustNewConstMetric(descDiskFree, prometheus.GaugeValue, float64(free))
		ch <- prometheus.MustNewConstMetric(descDiskSize, prometheus.GaugeValue, float64(size))
	}
	b.mu.RLock()
	topics := make([]*topic, 0, len(b.topics))
	for _, t := range b.topics {
		topics = append(topics, t)
	}
	b.mu.RUnlock()
	// A Kafka client names its group with any bytes; a label value that
	// is not UTF-8 fails the whole scrape. Such a name is exported with
	// U+FFFD for the bad bytes, and a second group that would give the
	// same label (a real U+FFFD in its name) is left out.
	labels := map[string]string{} // label -> the group it stands for
	groupLabel := func(group string) (string, bool) {
		if utf8.ValidString(group) {
			if g, ok := labels[group]; ok && g != group {
				return "", false
			}
			labels[group] = group
			return group, true
		}
		l := strings.ToValidUTF8(group, "\uFFFD")
		if g, ok := labels[l]; ok && g != group {
			return "", false
		}
		labels[l] = group
		return l, true
	}
	hwm := map[[2]string]int64{}
	logStart := map[[2]string]int64{}
	for _, t := range topics {
		ch <- prometheus.MustNewConstMetric(descRecordsIn, prometheus.CounterValue, float64(t.stats.recordsIn.Load()), t.name)
		ch <- prometheus.MustNewConstMetric(descBytesIn, prometheus.CounterValue, float64(t.stats.bytesIn.Load()), t.name)
		ch <- prometheus.MustNewConstMetric(descRecordsOut, prometheus.CounterValue, float64(t.stats.recordsOut.Load()), t.name)
		ch <- prometheus.MustNewConstMetric(descBytesOut, prometheus.CounterValue, float64(t.stats.bytesOut.Load()), t.name)
		for _, p := range t.partitions {
			info := p.info()
			id := strconv.Itoa(int(p.id))
			hwm[[2]string{t.name, id}] = info.HighWatermark
			logStart[[2]string{t.name, id}] = info.LogStartOffset
			ch <- prometheus.MustNewConstMetric(descEndOffset, prometheus.GaugeValue, float64(info.HighWatermark), t.name, id)
			ch <- prometheus.MustNewConstMetric(descStartOffset, prometheus.GaugeValue, float64(info.LogStartOffset), t.name, id)
			ch <- prometheus.MustNewConstMetric(descPartBytes, prometheus.GaugeValue, float64(info.Bytes), t.name, id)
			ch <- prometheus.MustNewConstMetric(descSegments, prometheus.GaugeValue, float64(info.Segments), t.name, id)
		}
	}
	committed := map[[3]string]bool{}
	for _, o := range b.offsets.all() {
		id := strconv.Itoa(int(o.Partition))
		end, ok := hwm[[2]string{o.Topic, id}]
		if !ok {
			continue
		}
		committed[[3]string{o.Group, o.Topic, id}] = true
		group, ok := groupLabel(o.Group)
		if !ok {
			continue
		}
		if o.Offset < 0 {
			// Committed as "none" (-2, -1: KafkaJS's resetOffsets): no
			// position, so the lag is from the log start, as kadm's
			// (weir groups describe) counts it.
			start := logStart[[2]string{o.Topic, id}]
			ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, float64(max(end-start, 0)), group, o.Topic, id)
			continue
		}
		ch <- prometheus.MustNewConstMetric(descCommitted, prometheus.GaugeValue, float64(o.Offset), group, o.Topic, id)
		ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, float64(max(end-o.Offset, 0)), group, o.Topic, id)
	}
	members := map[string]int{}
	groups := b.groups.describe()
	for _, g := range groups {
		members[g.Name] += len(g.Members)
	}
	// A partition an in-process group consumes but has never committed
	// lags from the log start, as `weir groups describe` counts it: a
	// sink stuck on its first batch (a destination refusing it) is the
	// lag most worth an alert, and has no commit at all.
	for _, g := range groups {
		group, ok := groupLabel(g.Name)
		if !ok {
			continue
		}
		subscribed := map[string]bool{}
		for _, m := range g.Members {
			if m.AtEnd {
				// Without a commit it starts at the end: its lag is not
				// the log's size.
				subscribed = nil
				break
			}
			for _, t := range m.Topics {
				subscribed[t] = true
			}
		}
		for _, t := range topics {
			if !subscribed[t.name] {
				continue
			}
			for _, p := range t.partitions {
				id := strconv.Itoa(int(p.id))
				if committed[[3]string{g.Name, t.name, id}] {
					continue
				}
				k := [2]string{t.name, id}
				ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, float64(max(hwm[k]-logStart[k], 0)), group, t.name, id)
			}
		}
	}
	for k, n := range b.groups.skippedRecords() {
		group, ok := groupLabel(k[0])
		if !ok {
			continue
		}
		ch <- prometheus.MustNewConstMetric(descSkipped, prometheus.CounterValue, float64(n), group, k[1], k[2])
	}
	if b.wire != nil {
		for name, n := range b.wire.memberCounts() {
			members[name] += n
		}
	}
	for name, n := range members {
		group, ok := groupLabel(name)
		if !ok {
			continue
		}
		ch <- prometheus.MustNewConstMetric(descMembers, prometheus.GaugeValue, float64(n), group)
	}
}
