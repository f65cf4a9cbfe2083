package main

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/kafkacluster"
	"github.com/weirnet/weir/configs"
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
	if k.TLS != nil {
		tc, err := k.TLS.Client().Config()
		if err != nil {
			return nil, fmt.Errorf("broker.kafka.tls: %w", err)
		}
		opts = append(opts, kgo.Dialer((&tls.Dialer{NetDialer: &net.Dialer{Timeout: 10 * time.Second}, Config: tc}).DialContext))
	}
	if k.SASL != nil {
		var m sasl.Mechanism
		auth := scram.Auth{User: k.SASL.Username, Pass: k.SASL.Password}
		switch k.SASL.Mechanism {
		case "PLAIN":
			m = plain.Auth{User: k.SASL.Username, Pass: k.SASL.Password}.AsMechanism()
		case "SCRAM-SHA-256":
			m = auth.AsSha256Mechanism()
		case "SCRAM-SHA-512":
			m = auth.AsSha512Mechanism()
		}
		opts = append(opts, kgo.SASL(m))
	}
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
