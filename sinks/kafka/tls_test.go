package kafka_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/kafka"
)

// TestTLSSettingsTurnTLSOn: a tls block that sets only server_name or
// insecure_skip_verify (no enabled, ca_file or cert_file) is accepted by
// the config check, so it must not be ignored: the sink speaks TLS, not
// plaintext (which would also send SASL credentials in the clear).
func TestTLSSettingsTurnTLSOn(t *testing.T) {
	for name, tls := range map[string]configs.SinkTLS{
		"server_name":          {ServerName: "kafka.example.net"},
		"insecure_skip_verify": {InsecureSkipVerify: true},
	} {
		t.Run(name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			first := make(chan byte, 1)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				b := make([]byte, 1)
				if _, err := c.Read(b); err == nil {
					first <- b[0]
				}
			}()
			c := configs.Sink{Type: "kafka", Name: "mirror", Topics: []string{"events"}, Brokers: []string{ln.Addr().String()},
				TLS: tls, Timeout: configs.Duration(time.Second)}
			d, err := kafka.New(c, sinks.Env{})
			if err != nil {
				t.Fatal(err)
			}
			written := make(chan struct{})
			go func() {
				defer close(written)
				d.Write(context.Background(), []sinks.Item{{Record: broker.Record{Topic: "events", Value: []byte("{}")}}})
			}()
			defer func() { d.Close(); <-written }()
			select {
			case b := <-first:
				if b != 0x16 { // a TLS handshake record
					t.Fatalf("first byte 0x%02x: the sink connected without TLS", b)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the sink never connected")
			}
		})
	}
}
