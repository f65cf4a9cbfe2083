package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirnet/weir/broker/kafkawire"
	"github.com/weirnet/weir/configs"
)

// resetFlags are the flags of `weir groups reset`: which partitions, where
// to (one of the six), and whether to commit. They are Kafka's
// kafka-consumer-groups.sh --reset-offsets flags, so an operator who knows
// that tool knows these.
type resetFlags struct {
	topics     multiFlag
	allTopics  bool
	partitions string

	toEarliest, toLatest bool
	toOffset, shiftBy    int64
	toDatetime           string
	byDuration           string

	execute, dryRun bool
}

func (f *resetFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.topics, "topic", "topic to reset (repeatable, or comma-separated); T:P,P is some partitions of T, as in Kafka's tool")
	fs.BoolVar(&f.allTopics, "all-topics", false, "reset every topic the group has committed offsets for")
	fs.StringVar(&f.partitions, "partition", "", "only these partitions (comma-separated) of the one --topic")
	fs.BoolVar(&f.toEarliest, "to-earliest", false, "to each partition's log start (read everything retained again)")
	fs.BoolVar(&f.toLatest, "to-latest", false, "to each partition's log end (skip the backlog)")
	fs.Int64Var(&f.toOffset, "to-offset", 0, "to this offset (within each partition's start and end)")
	fs.Int64Var(&f.shiftBy, "shift-by", 0, "move the committed offsets by N (negative: back)")
	fs.StringVar(&f.toDatetime, "to-datetime", "", "to the first record at or after this time (RFC 3339, e.g. 2026-12-04T14:00:00Z; without a zone: local time)")
	fs.StringVar(&f.byDuration, "by-duration", "", "to the first record at most this long ago (e.g. 90m, 2d, or ISO 8601 as Kafka's tool takes it: PT90M, P2D)")
	fs.BoolVar(&f.execute, "execute", false, "commit the new offsets (without it: print them, commit nothing)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the new offsets, commit nothing (the default; as in Kafka's tool)")
}

// errNoCommit: --shift-by has nothing to shift in a partition the group
// never committed (kafka-consumer-groups.sh fails the whole reset there;
// such a partition, often an empty one, is left as it is).
var errNoCommit = errors.New("nothing committed to shift: left as it is")

// target is how the new offset of a partition is found.
type target struct {
	name string // the flag, for messages
	// at is the time of --to-datetime and --by-duration (zero: not by time).
	at time.Time
	// offset gives the new offset from the partition's current committed
	// offset (-1: none), start and end, or an error.
	offset func(current, start, end int64) (int64, error)
	// asked, for --to-offset and --shift-by, is the offset asked for
	// before offset kept it within the log (nil: the others).
	asked func(current int64) int64
}

// resolve checks that exactly one way to reset was given and returns it.
func (f *resetFlags) resolve(fs *flag.FlagSet, now time.Time) (target, error) {
	var given []string
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "to-earliest", "to-latest", "to-offset", "shift-by", "to-datetime", "by-duration":
			if b, ok := fl.Value.(flag.Getter).Get().(bool); !ok || b {
				given = append(given, "--"+fl.Name)
			}
		}
	})
	if f.execute && f.dryRun {
		return target{}, &exitError{2, errors.New("groups reset: give --dry-run or --execute, not both")}
	}
	if len(given) != 1 {
		msg := "give one of --to-earliest, --to-latest, --to-offset N, --shift-by N, --to-datetime TIME, --by-duration D"
		if len(given) > 1 {
			msg += ", not " + strings.Join(given, " and ")
		}
		return target{}, &exitError{2, errors.New("groups reset: " + msg)}
	}
	clamp := func(o, start, end int64) int64 { return max(start, min(o, end)) }
	t := target{name: given[0]}
	switch t.name {
	case "--to-earliest":
		t.offset = func(_, start, _ int64) (int64, error) { return start, nil }
	case "--to-latest":
		t.offset = func(_, _, end int64) (int64, error) { return end, nil }
	case "--to-offset":
		t.offset = func(_, start, end int64) (int64, error) { return clamp(f.toOffset, start, end), nil }
		t.asked = func(int64) int64 { return f.toOffset }
	case "--shift-by":
		t.offset = func(cur, start, end int64) (int64, error) {
			if cur < 0 {
				return 0, errNoCommit
			}
			return clamp(cur+f.shiftBy, start, end), nil
		}
		t.asked = func(cur int64) int64 { return cur + f.shiftBy }
	case "--to-datetime":
		at, err := parseResetTime(f.toDatetime)
		if err != nil {
			return target{}, &exitError{2, fmt.Errorf("groups reset: --to-datetime: %w", err)}
		}
		t.at = at
	case "--by-duration":
		d, err := configs.ParseDuration(f.byDuration)
		if err != nil {
			d, err = parseISODuration(f.byDuration)
		}
		if err != nil || d <= 0 {
			return target{}, &exitError{2, fmt.Errorf("groups reset: --by-duration %q: want a positive duration such as 90m or 2d (or, as Kafka's tool takes it, PT90M or P2D)", f.byDuration)}
		}
		t.at = now.Add(-d)
	}
	return t, nil
}

// parseResetTime reads --to-datetime: RFC 3339, or the same without a zone
// (local time, as kafka-consumer-groups.sh takes it), to the second or
// finer.
func parseResetTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("2006-01-02T15:04:05.999999999", s, time.Local); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time such as 2026-12-04T14:00:00Z, 2026-12-04T15:00:00+01:00 or (local time) 2026-12-04T14:00:00", s)
}

// ceilMilli is t in Unix milliseconds, rounded up: records' timestamps are
// whole milliseconds, and a time between two (14:00:00.0005) is after the
// record of the one before, which "at or after the time" must not include.
func ceilMilli(t time.Time) int64 {
	ms := t.UnixMilli()
	if t.Sub(time.UnixMilli(ms)) > 0 {
		ms++
	}
	return ms
}

// parseISODuration reads an ISO 8601 duration as Java's Duration.parse,
// and so kafka-consumer-groups.sh --by-duration, takes it: PnDTnHnMnS,
// each part optional but at least one, the seconds (and, here, the others)
// possibly fractional. Negative durations are refused by the caller.
func parseISODuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("%q is not an ISO 8601 duration (PnDTnHnMnS)", s)
	rest, ok := strings.CutPrefix(strings.ToUpper(s), "P")
	if !ok || rest == "" {
		return 0, bad
	}
	datePart, timePart, hasT := strings.Cut(rest, "T")
	if hasT && timePart == "" {
		return 0, bad
	}
	var total float64
	parts := 0
	read := func(s string, units map[byte]time.Duration, order string) bool {
		for s != "" {
			i := strings.IndexAny(s, order)
			if i <= 0 {
				return false
			}
			v, err := strconv.ParseFloat(s[:i], 64)
			if err != nil || v < 0 || math.IsInf(v, 0) {
				return false
			}
			// Each unit at most once, in order.
			j := strings.IndexByte(order, s[i])
			total += v * float64(units[s[i]])
			order, s = order[j+1:], s[i+1:]
			parts++
		}
		return true
	}
	if !read(datePart, map[byte]time.Duration{'D': 24 * time.Hour}, "D") ||
		!read(timePart, map[byte]time.Duration{'H': time.Hour, 'M': time.Minute, 'S': time.Second}, "HMS") || parts == 0 {
		return 0, bad
	}
	if total >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return time.Duration(total), nil
}

// resetRow is one partition of a reset: where the group is and where it goes.
type resetRow struct {
	topic         string
	partition     int32
	current, next int64 // current -1: nothing committed
	start, end    int64
	err           error
}

// groupsReset moves a group's committed offsets: the partitions chosen,
// to where the flags say, printed, and committed with --execute. Kafka
// takes such a commit only while the group has no members; this checks
// first, to say so plainly.
func groupsReset(ctx context.Context, adm *kadm.Client, w io.Writer, group string, f *resetFlags, t target) error {
	described, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return fmt.Errorf("reset group %s: %w", group, shardErr(err))
	}
	if g, ok := described[group]; ok {
		// A group not there yet (Kafka 4's describe says so, older ones
		// say Dead) is made by the commit, as Kafka's own tool does.
		if g.Err != nil && !errors.Is(g.Err, kerr.GroupIDNotFound) {
			return fmt.Errorf("reset group %s: %w", group, g.Err)
		}
		if len(g.Members) > 0 {
			return fmt.Errorf("reset group %s: it has %d member(s) (state %s); stop them first, a group's offsets can be moved only while it has none%s",
				group, len(g.Members), g.State, ownGroupHint(group))
		}
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		committed, err = nil, nil // nothing committed yet
	}
	if err != nil {
		return fmt.Errorf("reset group %s: committed offsets: %w", group, shardErr(err))
	}
	topics, only, err := resetTopics(f, committed)
	if err != nil {
		return err
	}
	meta, err := adm.Metadata(ctx, topics...)
	if err != nil {
		return fmt.Errorf("reset group %s: %w", group, shardErr(err))
	}
	md := meta.Topics
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("reset group %s: start offsets: %w", group, shardErr(err))
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("reset group %s: end offsets: %w", group, shardErr(err))
	}
	var byTime kadm.ListedOffsets
	if !t.at.IsZero() {
		if byTime, err = adm.ListOffsetsAfterMilli(ctx, ceilMilli(t.at), topics...); err != nil {
			return fmt.Errorf("reset group %s: offsets at %s: %w", group, t.at.Format(time.RFC3339), shardErr(err))
		}
	}

	var rows []resetRow
	for _, topic := range topics {
		td, ok := md[topic]
		if !ok || td.Err != nil {
			why := "no such topic"
			if ok {
				why = td.Err.Error()
			}
			return fmt.Errorf("reset group %s: topic %s: %s", group, topic, why)
		}
		for _, p := range td.Partitions.Numbers() {
			if only[topic] != nil && !slices.Contains(only[topic], p) {
				continue
			}
			r := resetRow{topic: topic, partition: p, current: -1}
			if c, ok := committed.Lookup(topic, p); ok && c.Err == nil {
				r.current = c.At
			}
			s, sok := starts.Lookup(topic, p)
			e, eok := ends.Lookup(topic, p)
			switch {
			case !sok || !eok:
				r.err = errors.New("the broker listed no offsets")
			case s.Err != nil:
				r.err = s.Err
			case e.Err != nil:
				r.err = e.Err
			}
			if r.err == nil {
				r.start, r.end = s.Offset, e.Offset
				if t.at.IsZero() {
					r.next, r.err = t.offset(r.current, r.start, r.end)
				} else if o, ok := byTime.Lookup(topic, p); !ok || o.Err != nil {
					r.err = errors.New("the broker listed no offset by time")
					if ok {
						r.err = o.Err
					}
				} else {
					if r.next = o.Offset; r.next < 0 { // no record at or after the time
						r.next = r.end
					}
				}
			}
			rows = append(rows, r)
		}
		for _, p := range only[topic] {
			if !slices.Contains(td.Partitions.Numbers(), p) {
				return fmt.Errorf("reset group %s: topic %s has no partition %d", group, topic, p)
			}
		}
	}
	slices.SortFunc(rows, func(a, b resetRow) int {
		if c := strings.Compare(a.topic, b.topic); c != 0 {
			return c
		}
		return int(a.partition - b.partition)
	})

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tCURRENT\tNEW\tSTART\tEND\tLAG AFTER")
	var failed []string
	offsets := make(kadm.Offsets)
	moved, kept, back := 0, 0, 0 // kept: within the log, not where asked
	for _, r := range rows {
		if errors.Is(r.err, errNoCommit) {
			fmt.Fprintf(tw, "%s\t%d\t-\t-\t%d\t%d\t%s\n", r.topic, r.partition, r.start, r.end, r.err)
			continue
		}
		if r.err != nil {
			fmt.Fprintf(tw, "%s\t%d\t%s\t-\t-\t-\terror: %v\n", r.topic, r.partition, offsetText(r.current), r.err)
			failed = append(failed, fmt.Sprintf("%s/%d: %v", r.topic, r.partition, r.err))
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%d\n", r.topic, r.partition, offsetText(r.current), r.next, r.start, r.end, r.end-r.next)
		offsets.Add(kadm.Offset{Topic: r.topic, Partition: r.partition, At: r.next, LeaderEpoch: -1})
		moved++
		if r.current >= 0 && r.next < r.current {
			back++
		}
		if t.asked != nil && t.asked(r.current) != r.next {
			kept++
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("reset group %s: nothing committed: %s", group, strings.Join(failed, "; "))
	}
	if moved == 0 {
		return fmt.Errorf("reset group %s: no partitions to reset", group)
	}
	if kept > 0 {
		// As kafka-consumer-groups.sh warns of it.
		fmt.Fprintf(w, "\n%d partition(s): %s asks for an offset outside the log; NEW is its start or end\n", kept, t.name)
	}
	if group == "enrich" && back > 0 && meta.Cluster == kafkawire.DefaultClusterID {
		fmt.Fprint(w, enrichBackNote)
	}
	if len(committed) == 0 && !f.execute {
		// A name mistyped looks like a group without commits: its
		// table is every partition from nothing.
		fmt.Fprintf(w, "\ngroup %s has no members and no committed offsets: --execute makes it (weir groups list lists the groups there are)\n", group)
	}
	if !f.execute {
		fmt.Fprintf(w, "\ndry run: nothing committed; add --execute to move group %s to NEW\n", group)
		return nil
	}
	resp, err := adm.CommitOffsets(ctx, group, offsets)
	if err != nil {
		return fmt.Errorf("reset group %s: commit: %w", group, shardErr(err))
	}
	if err := resp.Error(); err != nil {
		if errors.Is(err, kerr.PolicyViolation) {
			// The embedded broker's bound of groups with committed
			// offsets; a Kafka cluster's policy is its own.
			return fmt.Errorf("reset group %s: commit: %w (on weir's broker: committed offsets are kept for at most 10000 groups; delete unused ones with weir groups delete, or wait for offsets_retention)", group, err)
		}
		return fmt.Errorf("reset group %s: commit: %w (a member may have joined meanwhile)%s", group, err, ownGroupHint(group))
	}
	fmt.Fprintf(w, "\ncommitted NEW for group %s on %d partition(s) (%s)\n", group, moved, t.name)
	return nil
}

// enrichBackNote is said when enrich is moved back on weir's log, where
// a worker skips the inputs whose outputs are there already (their
// src_offset headers; enrich/README.md, Exactly once).
const enrichBackNote = `
note: on weir's log enrich skips an input whose enriched record and events are
already there (exactly once), so moving it back re-derives nothing. To enrich
again (after an inventory or rule change), delete its outputs before it runs:
weir topics delete enriched.syslog (and enriched.metrics, events), and their
history with them.
`

// resetTopics is the topics a reset covers, --topic's, or with
// --all-topics those the group has committed offsets for, and the
// partitions it covers of those it does not cover whole: --partition's of
// the one --topic, or those a --topic T:P,P names (kafka-consumer-groups.sh's
// way; a topic name has no colon).
func resetTopics(f *resetFlags, committed kadm.OffsetResponses) ([]string, map[string][]int32, error) {
	var topics []string
	only := map[string][]int32{}
	named := false // a --topic T:P
	add := func(t string, ps []int32) {
		if !slices.Contains(topics, t) {
			topics = append(topics, t)
		} else if only[t] == nil {
			return // the whole topic already
		}
		if ps == nil {
			delete(only, t)
			return
		}
		for _, p := range ps {
			if !slices.Contains(only[t], p) {
				only[t] = append(only[t], p)
			}
		}
	}
	for _, v := range f.topics {
		if t, ps, ok := strings.Cut(v, ":"); ok {
			parts, err := partitionList(ps)
			if t = strings.TrimSpace(t); err != nil || t == "" {
				return nil, nil, &exitError{2, fmt.Errorf("groups reset: --topic %q: want a topic, or a topic and its partitions such as %s:0,3", v, cmp.Or(t, "T"))}
			}
			named = true
			add(t, parts)
			continue
		}
		for t := range strings.SplitSeq(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				add(t, nil)
			}
		}
	}
	switch {
	case f.allTopics && len(topics) > 0:
		return nil, nil, &exitError{2, errors.New("groups reset: give --topic or --all-topics, not both")}
	case f.allTopics:
		for t := range committed {
			topics = append(topics, t)
		}
		if len(topics) == 0 {
			return nil, nil, errors.New("groups reset: --all-topics: the group has no committed offsets; name the topics with --topic")
		}
	case len(topics) == 0:
		return nil, nil, &exitError{2, errors.New("groups reset: give --topic T (or --all-topics)")}
	}
	if f.partitions != "" {
		switch {
		case named:
			return nil, nil, &exitError{2, errors.New("groups reset: give the partitions with --partition or with --topic T:P, not both")}
		case len(topics) != 1:
			return nil, nil, &exitError{2, errors.New("groups reset: --partition needs exactly one --topic")}
		}
		ps, err := partitionList(f.partitions)
		if err != nil {
			return nil, nil, &exitError{2, fmt.Errorf("groups reset: --partition %q: want partition numbers such as 0,3", f.partitions)}
		}
		only[topics[0]] = ps
	}
	slices.Sort(topics)
	return topics, only, nil
}

// partitionList reads partition numbers such as 0,3.
func partitionList(s string) ([]int32, error) {
	var ps []int32
	for v := range strings.SplitSeq(s, ",") {
		p, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil || p < 0 {
			return nil, fmt.Errorf("%q is not a partition number", v)
		}
		ps = append(ps, int32(p))
	}
	return ps, nil
}

// ownGroupHint says how to stop the members of one of weir's own groups,
// which run inside `weir run`.
func ownGroupHint(group string) string {
	switch {
	case group == "enrich":
		return " (weir's enrichment: run weir without it meanwhile, e.g. --roles collect,sink)"
	case strings.HasPrefix(group, "sink-"):
		return " (weir's sink " + strings.TrimPrefix(group, "sink-") + ": run weir without sinks meanwhile, e.g. --roles collect,enrich)"
	}
	return ""
}
