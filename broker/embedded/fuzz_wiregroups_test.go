package embedded

import (
	"context"
	"encoding/binary"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
)

// groupKeys are the group requests a Kafka client may send the broker's
// coordinator, in the order a fuzz byte picks them.
var groupKeys = []int16{
	kmsg.JoinGroup.Int16(), kmsg.SyncGroup.Int16(), kmsg.Heartbeat.Int16(), kmsg.LeaveGroup.Int16(),
	kmsg.OffsetCommit.Int16(), kmsg.OffsetFetch.Int16(), kmsg.ListGroups.Int16(), kmsg.DescribeGroups.Int16(),
	kmsg.DeleteGroups.Int16(),
}

// FuzzWireGroups sends a sequence of arbitrary group requests (each: a key
// byte, a version byte, a 2-byte length and the body as a client would
// send it) to the embedded broker's coordinator: no panic, and every
// answer is of the request's version and reads back. A member ID of "$"
// stands for the last one the coordinator handed out, and generation -2
// for the last generation, so that the fuzzer can follow a protocol whose
// IDs it cannot guess.
func FuzzWireGroups(f *testing.F) {
	frame := func(dst []byte, req kmsg.Request) []byte {
		body := req.AppendTo(nil)
		dst = append(dst, byte(indexOfKey(req.Key())), byte(req.GetVersion()))
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(body)))
		return append(dst, body...)
	}
	join := joinReq("g", "", 10*time.Second, 10*time.Millisecond)
	join.Version = 9
	rejoin := joinReq("g", "$", 10*time.Second, 10*time.Millisecond)
	sync := syncReq("g", "$", -2, map[string]string{"$": "assignment"})
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID, hb.Generation = 4, "g", "$", -2
	commit := commitReq("g", "$", -2, "t", map[int32]int64{0: 5, 1: 3})
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Version, of.Group = 5, "g"
	lg := kmsg.NewPtrLeaveGroupRequest()
	lg.Version, lg.Group = 4, "g"
	lg.Members = []kmsg.LeaveGroupRequestMember{{MemberID: "$"}}
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Version, dg.Groups = 5, []string{"g", "h"}
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Version, del.Groups = 2, []string{"g"}
	lst := kmsg.NewPtrListGroupsRequest()
	lst.Version = 4
	var seq []byte
	for _, r := range []kmsg.Request{join, rejoin, sync, hb, commit, of, dg, lst, lg, del, of} {
		seq = frame(seq, r)
	}
	f.Add(seq)
	old := joinReq("g", "", 10*time.Second, 10*time.Millisecond)
	old.Version = 0
	f.Add(frame(frame(nil, old), commit))
	// An admin tool's negative commit (KafkaJS's resetOffsets), read back,
	// described and deleted.
	f.Add(frame(frame(frame(frame(nil, commitReq("g", "", -1, "t", map[int32]int64{0: -2, 1: -1})), of), dg), del))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Open(t.TempDir(), WithLogger(slog.New(slog.DiscardHandler)),
			WithTopicDefaults(broker.TopicConfig{Partitions: 2}))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 2}); err != nil {
			t.Fatal(err)
		}
		member, gen := "", int32(-1)
		sub := func(id *string, g *int32) {
			if *id == "$" {
				*id = member
			}
			if g != nil && *g == -2 {
				*g = gen
			}
		}
		for n := 0; len(data) >= 4 && n < 16; n++ {
			key := groupKeys[int(data[0])%len(groupKeys)]
			req := kmsg.RequestForKey(key)
			req.SetVersion(int16(data[1]) % (req.MaxVersion() + 1))
			size := min(int(binary.BigEndian.Uint16(data[2:])), len(data)-4)
			body := data[4 : 4+size]
			data = data[4+size:]
			if req.ReadFrom(body) != nil {
				continue
			}
			c, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			var resp kmsg.Response
			switch r := req.(type) {
			case *kmsg.JoinGroupRequest:
				sub(&r.MemberID, nil)
				jr := b.JoinGroup(c, "fuzz", "/127.0.0.1", r)
				if jr.MemberID != "" {
					member = jr.MemberID
				}
				if jr.ErrorCode == 0 {
					gen = jr.Generation
				}
				resp = jr
			case *kmsg.SyncGroupRequest:
				sub(&r.MemberID, &r.Generation)
				for i := range r.GroupAssignment {
					sub(&r.GroupAssignment[i].MemberID, nil)
				}
				resp = b.SyncGroup(c, r)
			case *kmsg.HeartbeatRequest:
				sub(&r.MemberID, &r.Generation)
				resp = b.Heartbeat(r)
			case *kmsg.LeaveGroupRequest:
				sub(&r.MemberID, nil)
				for i := range r.Members {
					sub(&r.Members[i].MemberID, nil)
				}
				resp = b.LeaveGroup(r)
			case *kmsg.OffsetCommitRequest:
				sub(&r.MemberID, &r.Generation)
				resp = b.OffsetCommit(r)
			case *kmsg.OffsetFetchRequest:
				resp = b.OffsetFetch(r)
			case *kmsg.ListGroupsRequest:
				resp = b.ListGroups(r)
			case *kmsg.DescribeGroupsRequest:
				resp = b.DescribeGroups(r)
			case *kmsg.DeleteGroupsRequest:
				resp = b.DeleteGroups(r)
			}
			cancel()
			if resp.GetVersion() != req.GetVersion() {
				t.Fatalf("%s v%d answered v%d", kmsg.NameForKey(key), req.GetVersion(), resp.GetVersion())
			}
			back := kmsg.ResponseForKey(key)
			back.SetVersion(resp.GetVersion())
			if err := back.ReadFrom(resp.AppendTo(nil)); err != nil {
				t.Fatalf("%s v%d answer does not read back: %v", kmsg.NameForKey(key), resp.GetVersion(), err)
			}
		}
	})
}

func indexOfKey(k int16) int {
	for i, g := range groupKeys {
		if g == k {
			return i
		}
	}
	return 0
}
