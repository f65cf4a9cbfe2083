package configs

import (
	"strings"
	"testing"
	"time"
)

func TestClusterShardTargets(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want bool
	}{
		{"", false}, // embedded log: one process collects everything
		{"broker: {kafka: {brokers: [k1:9092]}}\n", true},
		{"broker: {kafka: {brokers: [k1:9092]}}\ncluster: {shard_targets: false}\n", false},
		{"broker: {kafka: {brokers: [k1:9092]}}\ncluster: {shard_targets: true}\n", true},
		{"cluster: {shard_targets: auto}\n", false},
	} {
		cfg, err := Parse([]byte(tc.yaml))
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		if got := cfg.ShardTargets(); got != tc.want {
			t.Errorf("%q: shard targets %v, want %v", tc.yaml, got, tc.want)
		}
	}
	cfg, err := Parse([]byte("broker: {kafka: {brokers: [k1:9092]}}\ncluster: {group: ams1-collect, topic: ams1.shards, partitions: 12, session_timeout: 6s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.Cluster; c.Group != "ams1-collect" || c.Topic != "ams1.shards" || c.Partitions != 12 || c.SessionTimeout.Std() != 6*time.Second {
		t.Errorf("cluster: %+v", c)
	}
	d := Defaults().Cluster
	if d.Group != "weir-collect" || d.Topic != "weir.shards" || d.Partitions != 60 || d.SessionTimeout.Std() != 10*time.Second {
		t.Errorf("defaults: %+v", d)
	}
}

func TestClusterErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"cluster:\n  shard_targets: true\n", "line 2: cluster.shard_targets: needs broker.kafka"},
		{"cluster:\n  shard_targets: maybe\n", `line 2: cluster.shard_targets: "maybe" must be auto, true or false`},
		{"cluster:\n  session_timeout: 100ms\n", "line 2: cluster.session_timeout: must be between 1s and 1h"},
		{"cluster:\n  partitions: 0\n", "line 2: cluster.partitions: must be between 1 and 10000"},
		{"cluster:\n  topic: \"a b\"\n", "line 2: cluster.topic: invalid topic name"},
		{"cluster:\n  sessions: 3\n", "line 2: field sessions: unknown key in cluster"},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
