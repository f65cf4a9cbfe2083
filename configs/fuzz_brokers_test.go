package configs

import (
	"net"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.yaml.in/yaml/v3"
)

// FuzzBrokerAddress: a broker address the config check passes, in a
// kafka sink or broker.kafka, is one the client (franz-go) takes, with a
// port a connection can be made to: else weir run fails at start, or
// dials a port that cannot be.
func FuzzBrokerAddress(f *testing.F) {
	for _, s := range []string{"k1:9092", "k1", "[::1]:9092", "[::1]", "::1", "10.0.0.1:9093", "h:abc", "[::1]x", "h:99999", "h:", "h: 9092", "h:0", ":9092"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, b string, cluster bool) {
		doc := map[string]any{"sinks": []map[string]any{{"type": "kafka", "name": "k", "topics": []string{"events"}, "brokers": []string{b}, "topic_prefix": "x."}}}
		if cluster {
			doc = map[string]any{"broker": map[string]any{"kafka": map[string]any{"brokers": []string{b}}}}
		}
		y, err := yaml.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(y); err != nil {
			return
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(b))
		if err != nil {
			t.Fatalf("check passed broker %q, which the client refuses: %v", b, err)
		}
		cl.Close()
		h, p, err := net.SplitHostPort(franzAddr(t, b))
		if n, perr := strconv.Atoi(p); err != nil || perr != nil || n < 1 || n > 65535 || h == "" {
			t.Fatalf("check passed broker %q, dialled as %q", b, franzAddr(t, b))
		}
	})
}

func franzAddr(t *testing.T, b string) string {
	a, ok := franzDials(b)
	if !ok {
		t.Fatalf("franz-go dials nothing for %q", b)
	}
	return a
}
