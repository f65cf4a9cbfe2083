package configs

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.yaml.in/yaml/v3"
)

// FuzzKafkaSinkLoop: a kafka sink the config check passes does not reach
// weir's own Kafka listener. The reference is the real thing: the address
// franz-go (the sink's client) dials for the broker as written, dialled
// while a listener is on kafka_listen, as weir run makes it.
func FuzzKafkaSinkLoop(f *testing.F) {
	for _, s := range [][2]string{
		{"127.0.0.1:19092", "127.0.0.1:19092"},
		{"127.0.0.1:19092", "localhost:19092"},
		{"127.0.0.1:19092", "127.0.0.1:+19092"},
		{"0.0.0.0:19092", "[::1]:19092"},
		{"127.0.0.1:9092", "127.0.0.1"},
		{"127.0.0.1:9092", "localhost"},
		{"[::1]:9092", "::1"},
		{"[::1]:9092", "[::1]"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, listen, broker string) {
		if !bindable(listen) {
			return
		}
		y, err := yaml.Marshal(map[string]any{"broker": map[string]string{"kafka_listen": listen},
			"sinks": []map[string]any{{"type": "kafka", "name": "k", "topics": []string{"events"}, "brokers": []string{broker}}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(y); err != nil {
			return
		}
		dialled, ok := franzDials(broker)
		if !ok {
			return
		}
		h, p, err := net.SplitHostPort(dialled)
		if err != nil {
			return
		}
		// Only literal addresses and localhost: a name would be a DNS query.
		if _, err := netip.ParseAddr(h); err != nil && !strings.EqualFold(h, "localhost") {
			return
		}
		if _, lp, _ := net.SplitHostPort(listen); strings.TrimLeft(strings.TrimPrefix(lp, "+"), "0") != strings.TrimLeft(p, "0") {
			return // another port: whatever answers there is not this listener
		}
		ln, err := net.Listen("tcp", listen)
		if err != nil {
			return // held by something else, or not this machine's
		}
		defer ln.Close()
		accepted := make(chan struct{})
		go func() {
			if c, err := ln.Accept(); err == nil {
				c.Close()
				close(accepted)
			}
		}()
		c, err := net.DialTimeout("tcp", dialled, 5*time.Second)
		if err != nil {
			return
		}
		c.Close()
		<-accepted
		t.Fatalf("check passed broker %q beside kafka_listen %q; franz-go dials %s, weir's own broker", broker, listen, dialled)
	})
}

// franzDials is the address franz-go dials for broker as a seed.
func franzDials(broker string) (string, bool) {
	dialled := make(chan string, 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.RequestRetries(0),
		kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
			select {
			case dialled <- host:
			default:
			}
			return nil, errors.New("not dialled")
		}))
	if err != nil {
		return "", false
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl.Ping(ctx)
	select {
	case h := <-dialled:
		return h, true
	default:
		return "", false
	}
}
