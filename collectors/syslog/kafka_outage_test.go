package syslog

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/kafkacluster"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
	"github.com/weirnet/weir/telemetry"
)

// TestPublishStallOnKafkaOutageIsReported: when the Kafka cluster goes
// away mid-run, a reader whose batch cannot be published says so, as it
// does on the embedded log and as the SNMP collector does on Kafka: a
// publish error counted (weir_syslog_publish_errors_total) and a warning
// logged, within seconds. The Kafka backend's Produce waits for the
// cluster for as long as the caller's context lasts (franz-go's default
// delivery timeout is none), so publish.Publisher reports the wait while
// it lasts (publish.Waiter, StallAfter), without sending anything twice.
func TestPublishStallOnKafkaOutageIsReported(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	var closeOnce sync.Once
	closeCluster := func() { closeOnce.Do(kc.Close) }
	defer closeCluster()
	kb, err := kafkacluster.New(kc.ListenAddrs())
	if err != nil {
		t.Fatal(err)
	}
	defer kb.Close()
	if err := kb.CreateTopic(context.Background(), telemetry.TopicRawSyslog, broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := New(configs.Syslog{Listeners: []configs.SyslogListener{listener("tcp")}}, kb, WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	actx, acancel := context.WithTimeout(ctx, 5*time.Second)
	defer acancel()
	addrs, err := c.Addrs(actx)
	if err != nil {
		t.Fatal(err)
	}
	_, addr, _ := strings.Cut(addrs[0], "://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	name := "tcp://" + addr
	fmt.Fprintf(conn, "<13>Nov 29 14:08:10 h app: before\n")
	for deadline := time.Now().Add(10 * time.Second); testutil.ToFloat64(c.metrics.messages.WithLabelValues(name, FormatRFC3164)) < 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("first message not published")
		}
	}
	closeCluster() // the cluster goes away
	fmt.Fprintf(conn, "<13>Nov 29 14:08:11 h app: during the outage\n")
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if testutil.ToFloat64(c.metrics.publishErrors.WithLabelValues(name)) > 0 && strings.Contains(logs.String(), "publish waiting for the broker") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("20 s into the outage: weir_syslog_publish_errors_total %v, warnings logged: %q",
		testutil.ToFloat64(c.metrics.publishErrors.WithLabelValues(name)), logs.String())
}
