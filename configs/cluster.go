package configs

import (
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/weirnet/weir/internal/yamlerr"
)

// Cluster configures how the weir processes of one deployment, on one
// Kafka cluster, share the SNMP and gNMI targets.
type Cluster struct {
	// ShardTargets: auto (default) shares the targets when broker.kafka
	// is set; true requires it; false has every collecting process
	// collect every target.
	ShardTargets Switch `yaml:"shard_targets"`
	// Group prefixes the consumer group of the processes sharing the
	// targets; a digest of the target names follows it, so processes
	// configured with other targets (another site) share only among
	// themselves. Default weir-collect.
	Group string `yaml:"group"`
	// Topic is the coordination topic (nothing is written to it);
	// default weir.shards.
	Topic string `yaml:"topic"`
	// Partitions of the coordination topic when weir creates it: the
	// most processes that can share the targets. Default 60.
	Partitions int32 `yaml:"partitions"`
	// SessionTimeout is how long a killed process's targets, and its
	// enrichment partitions, wait before the others take them over
	// (Kafka's session.timeout.ms; brokers accept 6s to 5m by default).
	// Default 10s.
	SessionTimeout Duration `yaml:"session_timeout"`
}

// Defaults of the cluster section.
const (
	DefaultShardGroup          = "weir-collect"
	DefaultShardTopic          = "weir.shards"
	DefaultShardPartitions     = 60
	DefaultShardSessionTimeout = 10 * time.Second
)

// Switch is auto, true or false.
type Switch string

// Switch values.
const (
	SwitchAuto  Switch = "auto"
	SwitchTrue  Switch = "true"
	SwitchFalse Switch = "false"
)

// UnmarshalYAML accepts auto and YAML's booleans.
func (s *Switch) UnmarshalYAML(n *yaml.Node) error {
	switch n.Value {
	case "auto":
		*s = SwitchAuto
	case "true", "yes", "on":
		*s = SwitchTrue
	case "false", "no", "off":
		*s = SwitchFalse
	default:
		return yamlerr.NewValueError(n, "%q must be auto, true or false", n.Value)
	}
	return nil
}

// ShardTargets reports whether the collecting processes share the SNMP and
// gNMI targets, each collecting its share.
func (c *Config) ShardTargets() bool {
	switch c.Cluster.ShardTargets {
	case SwitchTrue:
		return true
	case SwitchFalse:
		return false
	}
	return len(c.Broker.Kafka.Brokers) > 0
}

func (c *Config) validateCluster(add func(path, format string, args ...any)) {
	cl := &c.Cluster
	if cl.ShardTargets == SwitchTrue && len(c.Broker.Kafka.Brokers) == 0 {
		add("cluster.shard_targets", "needs broker.kafka: on the embedded log one weir process collects every target")
	}
	if cl.Group == "" {
		add("cluster.group", "must not be empty")
	}
	if !validTopic(cl.Topic) {
		add("cluster.topic", "invalid topic name (letters, digits, '.', '_', '-'; at most 249)")
	}
	if cl.Partitions < 1 || cl.Partitions > 10000 {
		add("cluster.partitions", "must be between 1 and 10000, not %d", cl.Partitions)
	}
	if d := cl.SessionTimeout.Std(); d < time.Second || d > time.Hour {
		add("cluster.session_timeout", "must be between 1s and 1h, not %v", d)
	}
}
