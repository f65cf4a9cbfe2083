package broker

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestPartitionerMatchesFranzGo checks our partitioner against franz-go's
// Kafka-compatible key partitioner, which matches the Java client.
func TestPartitionerMatchesFranzGo(t *testing.T) {
	p := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	for _, n := range []int{1, 3, 6, 7, 64} {
		for i := 0; i < 2000; i++ {
			key := []byte(fmt.Sprintf("device-%d", i))
			if i%7 == 0 {
				key = key[:i%5] // short keys exercise the tail bytes
			}
			want := p.Partition(&kgo.Record{Key: key}, n)
			if got := PartitionForKey(key, int32(n)); int(got) != want {
				t.Fatalf("key %q over %d partitions: got %d, franz-go %d", key, n, got, want)
			}
		}
	}
}

// Known values from Kafka's own partitioner tests (murmur2 of these strings).
func TestMurmur2KnownValues(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int32
	}{
		{"21", -973932308},
		{"foobar", -790332482},
		{"a-little-bit-long-string", -985981536},
		{"a-little-bit-longer-string", -1486304829},
		{"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
		{"abc", 479470107},
	} {
		if got := int32(murmur2([]byte(tc.in))); got != tc.want {
			t.Errorf("murmur2(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestValidTopicName(t *testing.T) {
	for name, want := range map[string]bool{
		"raw.syslog": true, "a_b-C9": true, "": false, ".": false, "..": false,
		"has space": false, "slash/x": false, string(make([]byte, 250)): false,
	} {
		if got := ValidTopicName(name); got != want {
			t.Errorf("ValidTopicName(%q) = %v, want %v", name, got, want)
		}
	}
}

func BenchmarkPartitionForKey(b *testing.B) {
	key := []byte("edge-router-0042.ams1")
	for i := 0; i < b.N; i++ {
		PartitionForKey(key, 6)
	}
}
