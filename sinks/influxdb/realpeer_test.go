package influxdb_test

import (
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/influxdb"
)

// realInfluxDB starts a real InfluxDB 1.x with a database "net" and builds
// an influxdb sink of enriched.metrics writing there through the v1 API,
// batchSize records a batch (0: the default), retrying quickly.
func realInfluxDB(t *testing.T, batchSize int) (*peers.Influxd, configs.Sink, sinks.Destination) {
	t.Helper()
	d := peers.InfluxDB(t)
	d.Query("net", "CREATE DATABASE net")
	c := configs.Sink{Type: "influxdb", Name: "influx1", Topics: []string{"enriched.metrics"}, URL: "http://" + d.Addr,
		Database: "net", BatchSize: batchSize, FlushInterval: configs.Duration(20 * time.Millisecond),
		Retry: configs.SinkRetry{Initial: configs.Duration(20 * time.Millisecond), Max: configs.Duration(200 * time.Millisecond)}}
	dest, err := influxdb.New(c, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	return d, c, dest
}
