package kafkacluster

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/weirnet/weir/broker"
)

// The metrics the embedded log exports under the same names, so an alert
// on a sink's lag works on both backends.
var (
	descLag = prometheus.NewDesc("weir_consumer_lag",
		"Records between a group's committed offset (or, for a partition it consumes without one, the log start) and the log end.", []string{"group", "topic", "partition"}, nil)
	descCommitted = prometheus.NewDesc("weir_consumer_committed_offset",
		"A group's committed offset.", []string{"group", "topic", "partition"}, nil)
	descUnreachable = prometheus.NewDesc("weir_kafka_cluster_brokers_unreachable",
		"Brokers of the Kafka cluster whose last connection attempt, within the last minute, failed: above 0, weir cannot reach part or all of the cluster.", nil, nil)
)

// lagEvery is how often a scrape asks the cluster for lag; scrapes in
// between get the last answer, so a fast scraper does not load the
// group coordinators.
const lagEvery = 10 * time.Second

// lagTimeout bounds asking the cluster, so a cluster that does not answer
// delays a scrape this long at most (and then gives no lag series).
const lagTimeout = 5 * time.Second

// Collector exports the committed offset and lag of every partition of
// the consumer groups this process has joined (its enrichment workers
// and sinks), as Kafka computes them: a partition a member consumes but
// its group never committed lags from the log start, as on the embedded
// log. Every process of a cluster exports the groups it joined, so
// several may give the same series under their own instance label.
func (b *Broker) Collector() prometheus.Collector { return &lagCollector{b: b, every: lagEvery} }

type lagCollector struct {
	b     *Broker
	every time.Duration
	mu    sync.Mutex
	at    time.Time
	last  kadm.DescribedGroupLags
}

func (c *lagCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descLag
	ch <- descCommitted
	ch <- descUnreachable
}

func (c *lagCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descUnreachable, prometheus.GaugeValue, float64(c.b.dials.Failing()))
	for _, g := range c.lags() {
		if g.Error() != nil {
			continue
		}
		for _, l := range g.Lag.Sorted() {
			if l.Err != nil || l.Lag < 0 {
				continue
			}
			p := strconv.Itoa(int(l.Partition))
			if l.Commit.At >= 0 {
				ch <- prometheus.MustNewConstMetric(descCommitted, prometheus.GaugeValue, float64(l.Commit.At), g.Group, l.Topic, p)
			}
			ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, float64(l.Lag), g.Group, l.Topic, p)
		}
	}
}

// lags returns the groups' lag, asked of the cluster at most every
// c.every; an answer that failed is asked again at the next scrape.
func (c *lagCollector) lags() kadm.DescribedGroupLags {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last != nil && time.Since(c.at) < c.every {
		return c.last
	}
	groups := c.b.joinedGroups()
	if len(groups) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), lagTimeout)
	defer cancel()
	lags, err := c.b.admin.Lag(ctx, groups...)
	if err != nil {
		return nil
	}
	c.b.skipMarkers(ctx, lags)
	c.at, c.last = time.Now(), lags
	return lags
}

// MarkerLag is the most lag that is looked into for transaction markers
// (skipMarkers, and weir groups): a transaction leaves one commit marker
// after its records, an aborted one its records too.
const MarkerLag = 8

// skipMarkers sets to 0 the small lags that are only transaction markers
// or aborted records: a group that read and committed everything of a
// topic written in transactions (events, enriched.*) commits the offset
// after the last record, where the commit marker sits, and would lag 1
// for good (the Java client commits past it; franz-go does not say where
// its fetch stands). A read-committed fetch from the commit that finds no
// record says so.
func (b *Broker) skipMarkers(ctx context.Context, lags kadm.DescribedGroupLags) {
	var res broker.FetchResult
	for _, g := range lags {
		if g.Error() != nil {
			continue
		}
		for topic, parts := range g.Lag {
			for partition, l := range parts {
				if l.Err != nil || l.Lag <= 0 || l.Lag > MarkerLag || l.Commit.At < 0 {
					continue
				}
				if err := b.Fetch(ctx, topic, partition, l.Commit.At, broker.FetchOptions{MaxBytes: 64 << 10}, &res); err == nil && len(res.Records) == 0 {
					l.Lag = 0
					parts[partition] = l
				}
			}
		}
	}
}

// joinGroup records that a member of this process joined group. A
// member that starts at the log end without a commit (the shard's) is
// left out: Kafka would count its lag from the log start, which it never
// reads.
func (b *Broker) joinGroup(group string, atEnd bool) {
	if atEnd {
		return
	}
	b.groupsMu.Lock()
	defer b.groupsMu.Unlock()
	if b.groups == nil {
		b.groups = map[string]bool{}
	}
	b.groups[group] = true
}

// joinedGroups are the groups members of this process joined, sorted.
func (b *Broker) joinedGroups() []string {
	b.groupsMu.Lock()
	defer b.groupsMu.Unlock()
	return slices.Sorted(maps.Keys(b.groups))
}
