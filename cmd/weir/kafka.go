package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/kafkacluster"
	"github.com/weirnet/weir/configs"
)

// kafkaBackend connects to the Kafka cluster of broker.kafka.
func kafkaBackend(c configs.Broker) (*kafkacluster.Broker, error) {
	k := c.Kafka
	var opts []kgo.Opt
	if k.ClientID != "" {
		opts = append(opts, kgo.ClientID(k.ClientID))
	}
	if k.TLS != nil {
		tc, err := clientTLS(k.TLS)
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
		kafkacluster.WithClientOpts(opts...),
		kafkacluster.WithReplicationFactor(rf),
		kafkacluster.WithTopicDefaults(broker.TopicConfig{Partitions: c.DefaultPartitions}))
}

func clientTLS(t *configs.TLS) (*tls.Config, error) {
	tc := &tls.Config{ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify, MinVersion: tls.VersionTLS12}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, err
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("no certificates in %s", t.CAFile)
		}
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, err
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}
