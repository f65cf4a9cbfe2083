package gnmi

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/publish"
	"github.com/weirnet/weir/internal/runset"
	"github.com/weirnet/weir/internal/targetfile"
	"github.com/weirnet/weir/telemetry"
)

// WithStateFile keeps the names of the targets the collector was last
// given in path, so that its next start says removed (a gnmi_status with
// removed true) each one taken out of the config while weir was stopped,
// as a reload does: an outage a target was in would otherwise never end.
// The SNMP poller does the same with its own file. "" keeps nothing.
func WithStateFile(path string) Option { return func(c *Collector) { c.stateFile = path } }

// readKnown reads the state file; none (a first start) is an empty list.
func readKnown(path string) ([]string, error) { return targetfile.Read[string](path) }

// targetNames are the names of the collector's latest targets, which the
// state file keeps.
func (c *Collector) targetNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, len(c.targets))
	for i, t := range c.targets {
		names[i] = t.cfg.Name
	}
	return names
}

// withKnownRetry sets how often a failed save of the state file is tried
// again (default wholefile.RetryEvery); for tests.
func withKnownRetry(d time.Duration) Option { return func(c *Collector) { c.knownRetry = d } }

// removedWhileStopped says removed each target of the state file that the
// config no longer lists, then saves the list. The removals are published
// at once, under one bound (removedGrace), however many there are: the
// targets start after them. One whose record the broker did not take by
// then stays in the file, for the next start.
func (c *Collector) removedWhileStopped(ctx context.Context) {
	if c.stateFile == "" {
		return
	}
	known, err := readKnown(c.stateFile)
	if err != nil {
		c.log.Warn("gnmi: cannot read the list of targets subscribed to before; none taken out of the config since is told removed", slog.Any("err", err))
	}
	c.mu.Lock()
	listed := make(map[string]bool, len(c.targets))
	for _, t := range c.targets {
		listed[t.cfg.Name] = true
	}
	c.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, removedGrace)
	defer cancel()
	removed := slices.DeleteFunc(slices.Clone(known), func(name string) bool { return listed[name] })
	failed := make([]bool, len(removed))
	runset.AtOnce(len(removed), func(i int) { // as a reload's
		name, key := removed[i], removed[i]
		if c.deviceName != nil {
			if n := c.deviceName(name); n != "" {
				key = n
			}
		}
		// The retries of all of them logged together, as the targets'.
		pub := publish.Publisher{Broker: c.b, Topic: c.topic, Name: "gnmi", Logger: c.log.With(slog.String("target", name)),
			RetryLog: &c.retryLog, RetryLogger: c.log}
		if err := publishRemoved(rctx, &pub, name, []byte(key)); err != nil {
			if n, ok := c.removedLog.Due(time.Now()); ok {
				c.log.Warn("gnmi: a target taken out of the config while weir was stopped was not told removed; the next start tries again",
					slog.String("target", name), slog.Any("err", err), slog.Int("times", n))
			}
			failed[i] = true
		}
	})
	var unsaid []string
	for i, name := range removed {
		if failed[i] {
			unsaid = append(unsaid, name)
		}
	}
	c.known.Unsaid(unsaid...)
	c.known.Save()
}

// publishRemoved publishes the gnmi_status of target, keyed key, that says
// it was taken out of the config: its one field removed (true).
func publishRemoved(ctx context.Context, pub *publish.Publisher, target string, key []byte) error {
	now := time.Now()
	m := telemetry.Metric{V: telemetry.Version, Measurement: StatusMeasurement, Device: target,
		Fields: map[string]any{"removed": true}, Time: now, ReceivedAt: now, Source: Source}
	v, _, err := m.AppendJSON(nil, nil)
	if err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, removedGrace)
	defer cancel()
	_, err = pub.Publish(pctx, []broker.Record{{Timestamp: now, Key: key, Value: v, Headers: headers}})
	return err
}
