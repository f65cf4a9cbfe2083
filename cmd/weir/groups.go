package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker/kafkacluster"
)

const groupsUsage = `Usage:
  weir groups list
  weir groups describe GROUP
  weir groups delete GROUP
  weir groups reset GROUP (--topic T | --all-topics) [--partition P,...] (--to-earliest | --to-latest | --to-offset N | --shift-by N | --to-datetime TIME | --by-duration D) [--execute]
`

// groupsCmd lists, describes and deletes consumer groups: weir's own
// in-process workers, Kafka clients of the listener (kcat -G, franz-go,
// `weir consume --group`), or the groups of a Kafka cluster.
func groupsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	if len(args) == 0 {
		fmt.Fprint(stderr, groupsUsage)
		return &exitError{2, errors.New("groups: missing subcommand")}
	}
	sub, args := args[0], args[1:]
	if isHelp(sub) {
		fmt.Fprint(stdout, groupsUsage)
		return nil
	}
	fs := newFlagSet(subcommandSynopsis(groupsUsage, "weir groups "+sub), stderr)
	var cf clientFlags
	cf.register(fs)
	// Only reset takes these: describe --to-latest is refused, not ignored.
	var rf resetFlags
	if sub == "reset" || sub == "reset-offsets" {
		rf.register(fs)
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	oneGroup := func() (string, error) {
		if len(pos) != 1 {
			return "", &exitError{2, fmt.Errorf("groups %s: give one group", sub)}
		}
		return pos[0], nil
	}
	adm, cl, err := cf.admin()
	if err != nil {
		return err
	}
	defer cl.Close()
	defer func() { err = cf.why(err) }()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()

	switch sub {
	case "list", "ls":
		return groupsList(ctx, adm, cl, stdout)
	case "describe":
		g, err := oneGroup()
		if err != nil {
			return err
		}
		return groupsDescribe(ctx, adm, cl, stdout, g)
	case "delete", "rm":
		g, err := oneGroup()
		if err != nil {
			return err
		}
		if _, err := adm.DeleteGroup(ctx, g); err != nil {
			err = shardErr(err)
			switch {
			case errors.Is(err, kerr.NonEmptyGroup):
				// The code's name, not its text ("The group is not
				// empty."), which a user reads as "it has offsets".
				return fmt.Errorf("delete group %s: %w", g, &brokerMessage{kerr.NonEmptyGroup, "it has members; stop them first, a group can be deleted only while it has none" + ownGroupHint(g)})
			case errors.Is(err, kerr.GroupIDNotFound):
				return fmt.Errorf("delete group %s: no such group", g)
			}
			return fmt.Errorf("delete group %s: %w", g, err)
		}
		fmt.Fprintf(stdout, "deleted group %s and its committed offsets\n", g)
		return nil
	case "reset", "reset-offsets":
		g, err := oneGroup()
		if err != nil {
			return err
		}
		t, err := rf.resolve(fs, time.Now())
		if err != nil {
			return err
		}
		return groupsReset(ctx, adm, stdout, g, &rf, t)
	}
	fmt.Fprint(stderr, groupsUsage)
	return &exitError{2, fmt.Errorf("groups: unknown subcommand %q", sub)}
}

// groupsList prints every group with its state, member count and total lag
// (records between the committed offsets and the log end).
func groupsList(ctx context.Context, adm *kadm.Client, cl *kgo.Client, w io.Writer) error {
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return fmt.Errorf("list groups: %w", shardErr(err))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tSTATE\tMEMBERS\tLAG")
	names := listed.Groups()
	var lags kadm.DescribedGroupLags
	if len(names) > 0 {
		if lags, err = adm.Lag(ctx, names...); err != nil {
			return fmt.Errorf("group lag: %w", shardErr(err))
		}
		countRecords(ctx, adm, cl, lags)
	}
	for _, name := range names {
		l, ok := lags[name]
		if !ok || l.Error() != nil {
			fmt.Fprintf(tw, "%s\t%s\t\terror: %v\n", name, listed[name].State, l.Error())
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", name, l.State, len(l.Members), l.Lag.Total())
	}
	return tw.Flush()
}

// groupsDescribe prints a group's members with their assignments, then per
// partition the committed offset, the log end offset and the lag.
func groupsDescribe(ctx context.Context, adm *kadm.Client, cl *kgo.Client, w io.Writer, group string) error {
	lags, err := adm.Lag(ctx, group)
	if err != nil {
		return fmt.Errorf("describe group %s: %w", group, shardErr(err))
	}
	countRecords(ctx, adm, cl, lags)
	l, ok := lags[group]
	switch {
	case !ok:
		return fmt.Errorf("describe group %s: not in the broker's answer", group)
	case l.Error() != nil:
		return fmt.Errorf("describe group %s: %w", group, l.Error())
	case l.State == "Dead":
		return fmt.Errorf("describe group %s: no such group", group)
	}
	fmt.Fprintf(w, "group %s  state %s  protocol %s  members %d\n", group, l.State, orDash(l.Protocol), len(l.Members))

	if len(l.Members) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		// INSTANCE ID: a static member's group.instance.id, the name its
		// operator gave it.
		fmt.Fprintln(tw, "MEMBER\tINSTANCE ID\tCLIENT ID\tHOST\tASSIGNMENT")
		for _, m := range l.Members {
			instance := ""
			if m.InstanceID != nil {
				instance = *m.InstanceID
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.MemberID, orDash(instance), orDash(m.ClientID), orDash(strings.TrimPrefix(m.ClientHost, "/")), assignment(m))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	rows := l.Lag.Sorted()
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tCOMMITTED\tEND\tLAG\tMEMBER")
	for _, r := range rows {
		committed, lag := offsetText(r.Commit.At), "-"
		if r.Err == nil && r.Lag >= 0 {
			lag = strconv.FormatInt(r.Lag, 10)
		}
		member := "-"
		if r.Member != nil {
			member = r.Member.MemberID
		}
		if r.Err != nil {
			member = "error: " + r.Err.Error()
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\n", r.Topic, r.Partition, committed, r.End.Offset, lag, member)
	}
	return tw.Flush()
}

// countRecords sets the small lags to the records a read-committed member
// would still read: on a Kafka cluster a group that read and committed
// everything of a topic written in transactions (enrichment's events and
// enriched.*, which weir's sinks read) commits the offset of the commit
// marker after the last record, and Kafka's lag, offsets to the log end,
// would show it 1 behind per partition for good (weir_consumer_lag counts
// it 0 too). A lag that cannot be read so stays Kafka's.
func countRecords(ctx context.Context, adm *kadm.Client, cl *kgo.Client, lags kadm.DescribedGroupLags) {
	small := func(l kadm.GroupMemberLag) bool {
		return l.Err == nil && l.Lag > 0 && l.Lag <= kafkacluster.MarkerLag && l.Commit.At >= 0
	}
	var topics []string
	for _, g := range lags {
		for t, ps := range g.Lag {
			for _, l := range ps {
				if g.Error() == nil && small(l) && !slices.Contains(topics, t) {
					topics = append(topics, t)
				}
			}
		}
	}
	if len(topics) == 0 {
		return
	}
	// A leader that does not answer leaves Kafka's lags, not the
	// command waiting for it.
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	md, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		return
	}
	dec := kgo.DefaultDecompressor()
	for _, g := range lags {
		if g.Error() != nil {
			continue
		}
		for t, ps := range g.Lag {
			for p, l := range ps {
				if !small(l) {
					continue
				}
				pd, ok := md[t].Partitions[p]
				if !ok || pd.Err != nil {
					continue
				}
				if n, ok := committedRecords(ctx, cl, dec, pd.Leader, t, p, l.Commit.At, l.End.Offset); ok {
					l.Lag = n
					ps[p] = l
				}
			}
		}
	}
}

// committedRecords counts the records a read-committed fetch finds in
// [from, end) of a partition, led by leader; ok is false if one fetch does
// not reach end.
func committedRecords(ctx context.Context, cl *kgo.Client, dec kgo.Decompressor, leader int32, topic string, partition int32, from, end int64) (int64, bool) {
	req := kmsg.NewPtrFetchRequest()
	req.IsolationLevel = 1 // read committed
	req.MinBytes = 1
	req.MaxBytes = 1 << 20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = partition, from, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := cl.Broker(int(leader)).Request(ctx, fetchByName{req})
	if err != nil {
		return 0, false
	}
	fr := resp.(*kmsg.FetchResponse)
	if kerr.ErrorForCode(fr.ErrorCode) != nil || len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 1 {
		return 0, false
	}
	fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
		Offset: from, IsolationLevel: kgo.ReadCommitted(), Topic: topic, Partition: partition,
	}, &fr.Topics[0].Partitions[0], dec, nil)
	if fp.Err != nil || next < end {
		return 0, false
	}
	var n int64
	for _, r := range fp.Records {
		if r.Offset < end {
			n++
		}
	}
	return n, true
}

// fetchByName is a fetch request sent at v12 at most, which names its
// topic (v13 on name it by ID), with no wait.
type fetchByName struct{ *kmsg.FetchRequest }

func (fetchByName) MaxVersion() int16 { return 12 }

// assignment formats a consumer's assignment as topic[p,p,...] per topic.
func assignment(m kadm.DescribedGroupMember) string {
	a, ok := m.Assigned.AsConsumer()
	if !ok || len(a.Topics) == 0 {
		return "-"
	}
	var parts []string
	for _, t := range a.Topics {
		ps := slices.Sorted(slices.Values(t.Partitions))
		strs := make([]string, len(ps))
		for i, p := range ps {
			strs[i] = strconv.Itoa(int(p))
		}
		parts = append(parts, t.Topic+"["+strings.Join(strs, ",")+"]")
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// shardErr is the one reason of a request that failed on every broker it
// went to for the same reason (none could be reached, most often), without
// kadm's "request X has N separate shard errors, first:" in front.
func shardErr(err error) error {
	var se *kadm.ShardErrors
	if !errors.As(err, &se) || !se.AllFailed || len(se.Errs) == 0 {
		return err
	}
	first := se.Errs[0].Err
	for _, e := range se.Errs[1:] {
		if e.Err.Error() != first.Error() {
			return err
		}
	}
	return first
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// offsetText is a committed offset, or "-" for none (-1).
func offsetText(o int64) string {
	if o < 0 {
		return "-"
	}
	return strconv.FormatInt(o, 10)
}
