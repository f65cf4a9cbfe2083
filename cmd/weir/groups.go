package main

import (
	"cmp"
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
// groupsSubcommands are groups' subcommands, for suggest.
var groupsSubcommands = []string{"list", "describe", "delete", "reset"}

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
	var format outputFormat
	if sub == "list" || sub == "ls" || sub == "describe" {
		format.register(fs)
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
		return groupsList(ctx, adm, cl, stdout, format)
	case "describe":
		g, err := oneGroup()
		if err != nil {
			return err
		}
		return groupsDescribe(ctx, adm, cl, stdout, g, format)
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
	return &exitError{2, fmt.Errorf("groups: unknown subcommand %q%s", sub, suggest(sub, groupsSubcommands))}
}

// groupRow is one group of `groups list`.
type groupRow struct {
	Group string `json:"group"`
	State string `json:"state"`
	// Members and Lag are null when the group could not be read (Error
	// says why): a script adding the lags must not take a 0 for them.
	Members *int   `json:"members"`
	Lag     *int64 `json:"lag"`
	Error   string `json:"error,omitempty"`
}

// errGroupLeftOut is the error of a group the broker listed but did not
// describe.
var errGroupLeftOut = errors.New("not in the broker's answer to describe it")

// errNoReason is the error shown for a group not read whose error has no
// text: a row's error is what says it has no figures.
const errNoReason = "not read (no reason given)"

// groupRows are the rows of `groups list` for the groups names, listed
// with lags.
func groupRows(names []string, listed kadm.ListedGroups, lags kadm.DescribedGroupLags) []groupRow {
	rows := []groupRow{}
	for _, name := range names {
		l, ok := lags[name]
		err := l.Error()
		if !ok {
			err = errGroupLeftOut
		}
		if err != nil {
			rows = append(rows, groupRow{Group: name, State: listed[name].State, Error: cmp.Or(err.Error(), errNoReason)})
			continue
		}
		members, lag := len(l.Members), l.Lag.Total()
		rows = append(rows, groupRow{Group: name, State: l.State, Members: &members, Lag: &lag})
	}
	return rows
}

// groupsList prints every group with its state, member count and total lag
// (records between the committed offsets and the log end).
func groupsList(ctx context.Context, adm *kadm.Client, cl *kgo.Client, w io.Writer, format outputFormat) error {
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return fmt.Errorf("list groups: %w", shardErr(err))
	}
	names := listed.Groups()
	var lags kadm.DescribedGroupLags
	if len(names) > 0 {
		if lags, err = adm.Lag(ctx, names...); err != nil {
			return fmt.Errorf("group lag: %w", shardErr(err))
		}
		countRecords(ctx, adm, cl, lags)
	}
	rows := groupRows(names, listed, lags)
	if format == outputJSON {
		return writeJSON(w, rows)
	}
	return writeGroupsTable(w, rows)
}

// writeGroupsTable writes the rows of `groups list` as a table.
func writeGroupsTable(w io.Writer, rows []groupRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tSTATE\tMEMBERS\tLAG")
	for _, r := range rows {
		if r.Members == nil || r.Lag == nil {
			fmt.Fprintf(tw, "%s\t%s\t\terror: %s\n", r.Group, r.State, r.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", r.Group, r.State, *r.Members, *r.Lag)
	}
	return tw.Flush()
}

// groupDescription is `groups describe`.
type groupDescription struct {
	Group      string               `json:"group"`
	State      string               `json:"state"`
	Protocol   string               `json:"protocol"`
	Members    []describedMember    `json:"members"`
	Partitions []describedPartition `json:"partitions"`
}

// describedMember is a member of a group and what it was assigned.
type describedMember struct {
	MemberID string `json:"member_id"`
	// InstanceID is a static member's group.instance.id, the name its
	// operator gave it.
	InstanceID *string            `json:"instance_id"`
	ClientID   string             `json:"client_id"`
	Host       string             `json:"host"`
	Assignment map[string][]int32 `json:"assignment"`
}

// describedPartition is a partition the group reads or has committed.
type describedPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Committed is null for a partition without a commit.
	Committed *int64 `json:"committed"`
	End       int64  `json:"end"`
	// Lag is null when it could not be read (Error says why).
	Lag    *int64  `json:"lag"`
	Member *string `json:"member"`
	Error  string  `json:"error,omitempty"`
}

// groupsDescribe prints a group's members with their assignments, then per
// partition the committed offset, the log end offset and the lag.
func groupsDescribe(ctx context.Context, adm *kadm.Client, cl *kgo.Client, w io.Writer, group string, format outputFormat) error {
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
	d := describeGroup(l)
	if format == outputJSON {
		return writeJSON(w, d)
	}
	return writeGroupDescription(w, d)
}

// describeGroup is l as `groups describe` shows it.
func describeGroup(l kadm.DescribedGroupLag) groupDescription {
	d := groupDescription{Group: l.Group, State: l.State, Protocol: l.Protocol, Members: []describedMember{}, Partitions: []describedPartition{}}
	for _, m := range l.Members {
		d.Members = append(d.Members, describedMember{
			MemberID:   m.MemberID,
			InstanceID: m.InstanceID,
			ClientID:   m.ClientID,
			Host:       strings.TrimPrefix(m.ClientHost, "/"),
			Assignment: assigned(m),
		})
	}
	for _, r := range l.Lag.Sorted() {
		p := describedPartition{Topic: r.Topic, Partition: r.Partition, End: r.End.Offset}
		if r.Commit.At >= 0 {
			p.Committed = &r.Commit.At
		}
		if r.Err == nil && r.Lag >= 0 {
			p.Lag = &r.Lag
		}
		if r.Member != nil {
			p.Member = &r.Member.MemberID
		}
		if r.Err != nil {
			p.Error = r.Err.Error()
		}
		d.Partitions = append(d.Partitions, p)
	}
	return d
}

// writeGroupDescription writes d as tables.
func writeGroupDescription(w io.Writer, d groupDescription) error {
	fmt.Fprintf(w, "group %s  state %s  protocol %s  members %d\n", d.Group, d.State, orDash(d.Protocol), len(d.Members))
	if len(d.Members) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "MEMBER\tINSTANCE ID\tCLIENT ID\tHOST\tASSIGNMENT")
		for _, m := range d.Members {
			instance := ""
			if m.InstanceID != nil {
				instance = *m.InstanceID
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.MemberID, orDash(instance), orDash(m.ClientID), orDash(m.Host), assignmentText(m.Assignment))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(d.Partitions) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tCOMMITTED\tEND\tLAG\tMEMBER")
	for _, p := range d.Partitions {
		committed, lag, member := "-", "-", "-"
		if p.Committed != nil {
			committed = strconv.FormatInt(*p.Committed, 10)
		}
		if p.Lag != nil {
			lag = strconv.FormatInt(*p.Lag, 10)
		}
		if p.Member != nil {
			member = *p.Member
		}
		if p.Error != "" {
			member = "error: " + p.Error
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\n", p.Topic, p.Partition, committed, p.End, lag, member)
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

// assigned is a consumer's assignment by topic, partitions sorted; empty
// for a member that is not a consumer or has none.
func assigned(m kadm.DescribedGroupMember) map[string][]int32 {
	out := map[string][]int32{}
	a, ok := m.Assigned.AsConsumer()
	if !ok {
		return out
	}
	for _, t := range a.Topics {
		out[t.Topic] = slices.Sorted(slices.Values(append(out[t.Topic], t.Partitions...)))
	}
	return out
}

// assignmentText formats an assignment as topic[p,p,...] per topic, or
// "-" for none.
func assignmentText(a map[string][]int32) string {
	if len(a) == 0 {
		return "-"
	}
	var parts []string
	for topic, ps := range a {
		strs := make([]string, len(ps))
		for i, p := range ps {
			strs[i] = strconv.Itoa(int(p))
		}
		parts = append(parts, topic+"["+strings.Join(strs, ",")+"]")
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
