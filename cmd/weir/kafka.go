package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/kafkacluster"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/kafkasec"
	"github.com/weirnet/weir/internal/tlsconf"
)

// kafkaBackend connects to the Kafka cluster of broker.kafka. dataDir
// holds the process's instance id (see instanceID).
func kafkaBackend(c configs.Broker, dataDir string, logger *slog.Logger) (*kafkacluster.Broker, error) {
	k := c.Kafka
	instance, err := instanceID(dataDir)
	if err != nil {
		return nil, err
	}
	var opts []kgo.Opt
	if k.ClientID != "" {
		opts = append(opts, kgo.ClientID(k.ClientID))
	}
	var tc *tlsconf.Client
	if k.TLS != nil {
		c := k.TLS.Client()
		tc = &c
	}
	sec, err := kafkasec.Options(tc, k.SASL)
	if err != nil {
		return nil, fmt.Errorf("broker.kafka: %w", err)
	}
	opts = append(opts, sec...)
	opts = append(opts, kgo.ProducerBatchCompression(kafkaCodec(c.Compression)))
	rf := k.ReplicationFactor
	if rf == 0 {
		rf = -1
	}
	return kafkacluster.New(k.Brokers,
		kafkacluster.WithInstance(instance),
		kafkacluster.WithLogger(logger),
		kafkacluster.WithClientOpts(opts...),
		kafkacluster.WithReplicationFactor(rf),
		kafkacluster.WithTopicDefaults(broker.TopicConfig{Partitions: c.DefaultPartitions}),
		kafkacluster.WithTopics(topicConfigs(c)))
}

// kafkaCodec is franz-go's codec for broker.compression ("" as the
// default, snappy).
func kafkaCodec(c configs.Codec) kgo.CompressionCodec {
	switch c {
	case "none":
		return kgo.NoCompression()
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		return kgo.ZstdCompression()
	case "gzip":
		return kgo.GzipCompression()
	}
	return kgo.SnappyCompression()
}

// instanceID names this weir process in its Kafka transactional ids: the
// host name and a random id kept in data_dir/instance-id. Two processes
// with the same name would fence each other's transactions forever, as
// containers on one host can have the same host name and pid; kept in the
// data directory, the id survives a restart, so a restarted process aborts
// the transactions its predecessor left open at once instead of the
// cluster doing so after the transaction timeout.
func instanceID(dataDir string) (string, error) {
	path := filepath.Join(dataDir, "instance-id")
	id, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("instance id: %w", err)
		}
		var b [6]byte
		rand.Read(b[:])
		id = []byte(hex.EncodeToString(b[:]))
		if err := os.MkdirAll(dataDir, 0o755); err != nil {
			return "", fmt.Errorf("instance id: %w", err)
		}
		if err := os.WriteFile(path, append(id, '\n'), 0o644); err != nil {
			return "", fmt.Errorf("instance id: %w", err)
		}
	}
	host, _ := os.Hostname()
	return host + "-" + strings.TrimSpace(string(id)), nil
}
