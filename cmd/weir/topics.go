package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/telemetry"
)

const topicsUsage = `Usage:
  weir topics list [TOPIC ...]
  weir topics describe TOPIC
  weir topics create TOPIC [--partitions N] [--retention 7d] [--retention-bytes 1GiB] [--config k=v ...]
  weir topics alter TOPIC [--retention 3d] [--retention-bytes 1GiB] [--config k=v ...] [--delete-config k ...]
  weir topics delete TOPIC
`

func topicsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	if len(args) == 0 {
		fmt.Fprint(stderr, topicsUsage)
		return &exitError{2, errors.New("topics: missing subcommand")}
	}
	sub, args := args[0], args[1:]
	if isHelp(sub) {
		fmt.Fprint(stdout, topicsUsage)
		return nil
	}
	fs := newFlagSet(subcommandSynopsis(topicsUsage, "weir topics "+sub), stderr)
	var cf clientFlags
	cf.register(fs)
	// Only create and alter take these: list --partitions 3 is refused,
	// not ignored, and list -h shows the flags list takes.
	partitions, retention, retentionBytes := new(int), new(string), new(string)
	var format outputFormat
	if sub == "list" || sub == "ls" || sub == "describe" {
		format.register(fs)
	}
	var kvs, deletes multiFlag
	if sub == "create" {
		fs.IntVar(partitions, "partitions", -1, "partitions (-1: the broker's default)")
	}
	if sub == "create" || sub == "alter" {
		fs.StringVar(retention, "retention", "", "retention time, e.g. 7d or 12h; -1 keeps records for ever")
		fs.StringVar(retentionBytes, "retention-bytes", "", "retention bytes per partition, e.g. 1GiB; -1 for no size bound")
		fs.Var(&kvs, "config", "topic config key=value, repeatable")
	}
	if sub == "alter" {
		fs.Var(&deletes, "delete-config", "topic config to remove (back to the broker's default), repeatable")
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
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
		return topicsList(ctx, adm, stdout, pos, format)
	case "describe":
		if len(pos) != 1 {
			return &exitError{2, errors.New("topics describe: give one topic")}
		}
		return topicsDescribe(ctx, adm, stdout, pos[0], format)
	case "create":
		if len(pos) != 1 {
			return &exitError{2, errors.New("topics create: give one topic")}
		}
		if !broker.ValidTopicName(pos[0]) {
			// Checked here too: a Kafka cluster may take a name that
			// Kafka's own tools and weir's config refuse (kfake does).
			return &exitError{2, fmt.Errorf("topics create: invalid topic name %q: use 1 to 249 of [a-zA-Z0-9._-], other than \".\" and \"..\"", pos[0])}
		}
		topicConfigs, err := configFlags(*retention, *retentionBytes, kvs)
		if err != nil {
			return err
		}
		resp, err := adm.CreateTopic(ctx, int32(*partitions), -1, topicConfigs, pos[0])
		// kadm returns the topic's error as err too: look at the
		// response first, for the broker's reason (which config, which
		// value), which Kafka's text for the code does not give.
		if resp.Err != nil {
			return fmt.Errorf("create %s: %w", pos[0], withMessage(resp.Err, resp.ErrMessage))
		}
		if err != nil {
			return fmt.Errorf("create %s: %w", pos[0], err)
		}
		fmt.Fprintf(stdout, "created %s with %d partitions\n", resp.Topic, resp.NumPartitions)
		return nil
	case "alter":
		if len(pos) != 1 {
			return &exitError{2, errors.New("topics alter: give one topic")}
		}
		return topicsAlter(ctx, adm, stdout, pos[0], *retention, *retentionBytes, kvs, deletes)
	case "delete", "rm":
		if len(pos) != 1 {
			return &exitError{2, errors.New("topics delete: give one topic")}
		}
		resps, err := adm.DeleteTopics(ctx, pos[0])
		if err != nil {
			return fmt.Errorf("delete %s: %w", pos[0], err)
		}
		for _, r := range resps {
			if errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
				return fmt.Errorf("delete %s: no such topic", r.Topic)
			}
			if r.Err != nil {
				return fmt.Errorf("delete %s: %w", r.Topic, withMessage(r.Err, r.ErrMessage))
			}
			fmt.Fprintf(stdout, "deleted %s\n", r.Topic)
		}
		return nil
	}
	fmt.Fprint(stderr, topicsUsage)
	return &exitError{2, fmt.Errorf("topics: unknown subcommand %q%s", sub, suggest(sub, topicsSubcommands))}
}

// configFlags are create's and alter's --retention, --retention-bytes and
// --config as topic configs. A key given twice is a usage error: which one
// was meant?
func configFlags(retention, retentionBytes string, kvs []string) (map[string]*string, error) {
	topicConfigs := map[string]*string{}
	add := func(flag, k, v string) error {
		if _, dup := topicConfigs[k]; dup {
			return &exitError{2, fmt.Errorf("%s: %s is given twice", flag, k)}
		}
		topicConfigs[k] = &v
		return nil
	}
	if retention != "" {
		d, err := configs.ParseDuration(retention)
		if err != nil {
			return nil, &exitError{2, fmt.Errorf("--retention: %w", err)}
		}
		ms := strconv.FormatInt(d.Milliseconds(), 10)
		switch {
		case configs.RetainForever(d):
			// As in the config file; -1ns is 0 ms: delete at once.
			ms = "-1"
		case d < time.Millisecond:
			return nil, &exitError{2, fmt.Errorf("--retention %q: want a positive duration of at least 1ms, or -1 to keep records for ever", retention)}
		}
		add("--retention", "retention.ms", ms)
	}
	if retentionBytes != "" {
		n, err := configs.ParseByteSize(retentionBytes)
		if err != nil {
			return nil, &exitError{2, fmt.Errorf("--retention-bytes: %w", err)}
		}
		add("--retention-bytes", "retention.bytes", strconv.FormatInt(n, 10))
	}
	for _, kv := range kvs {
		for _, one := range splitConfigs(kv) {
			k, v, ok := strings.Cut(one, "=")
			if !ok || k == "" {
				return nil, &exitError{2, fmt.Errorf("--config %q: want key=value", kv)}
			}
			if err := add("--config", k, v); err != nil {
				return nil, err
			}
		}
	}
	return topicConfigs, nil
}

// splitConfigs splits a --config value written as kafka-configs.sh's
// --add-config takes it, k1=v1,k2=v2, into its settings; a part without
// "=" belongs to the value before it (a list: cleanup.policy=compact,delete).
func splitConfigs(kv string) []string {
	var out []string
	for part := range strings.SplitSeq(kv, ",") {
		if len(out) > 0 && !strings.Contains(part, "=") {
			out[len(out)-1] += "," + part
			continue
		}
		out = append(out, part)
	}
	return out
}

// topicsAlter changes a topic's configs with IncrementalAlterConfigs (SET
// and DELETE, as kafka-configs --alter --add-config/--delete-config: the
// configs not named stay as they are) and prints them as describe does.
func topicsAlter(ctx context.Context, adm *kadm.Client, w io.Writer, topic, retention, retentionBytes string, kvs, deletes []string) error {
	if !broker.ValidTopicName(topic) {
		return &exitError{2, fmt.Errorf("topics alter: invalid topic name %q", topic)}
	}
	set, err := configFlags(retention, retentionBytes, kvs)
	if err != nil {
		return err
	}
	if len(set) == 0 && len(deletes) == 0 {
		return &exitError{2, errors.New("topics alter: nothing to change: give --retention, --retention-bytes, --config k=v or --delete-config k")}
	}
	var alters []kadm.AlterConfig
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: set[k]})
	}
	for i, k := range deletes {
		if _, both := set[k]; both {
			return &exitError{2, fmt.Errorf("--delete-config %s: it is also set", k)}
		}
		if !slices.Contains(deletes[:i], k) { // a key named twice is sent once
			alters = append(alters, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
		}
	}
	resps, err := adm.AlterTopicConfigs(ctx, alters, topic)
	if err != nil {
		return fmt.Errorf("alter %s: %w", topic, shardErr(err))
	}
	for _, r := range resps {
		if r.Err != nil {
			if errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
				return fmt.Errorf("alter %s: no such topic%s", topic, noTopicHint(topic, ""))
			}
			return fmt.Errorf("alter %s: %w", topic, withMessage(r.Err, r.ErrMessage))
		}
	}
	fmt.Fprintf(w, "altered %s\n", topic)
	if line := topicConfigLine(describedConfigs(ctx, adm, topic)); line != "" {
		fmt.Fprintln(w, line)
	}
	return nil
}

// withMessage is a broker's error with the message it sent: for a Kafka
// error code, the code's name and the message ("INVALID_PARTITIONS:
// invalid partition count: 100000 (1 to 10000)"), not the code's stock
// text too, which may say the opposite ("Number of partitions is below
// 1."); errors.Is still finds the code.
func withMessage(err error, msg string) error {
	var ke *kerr.Error
	switch {
	case msg == "":
		return err
	case errors.As(err, &ke):
		return &brokerMessage{ke, msg}
	}
	return fmt.Errorf("%w: %s", err, msg)
}

// brokerMessage is a Kafka error code with the broker's message.
type brokerMessage struct {
	code *kerr.Error
	msg  string
}

func (e *brokerMessage) Error() string { return e.code.Message + ": " + e.msg }
func (e *brokerMessage) Unwrap() error { return e.code }

// partitionSizes asks the broker for bytes per partition (DescribeLogDirs);
// a partition whose broker does not answer, or does not let the user ask
// (DESCRIBE on the cluster), is not in it, and its size is shown unknown
// (bytesText).
func partitionSizes(ctx context.Context, adm *kadm.Client) map[string]map[int32]int64 {
	out := map[string]map[int32]int64{}
	// A nil set asks for every partition; Kafka answers a topic listed
	// without partitions with none.
	dirs, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		return out
	}
	dirs.Each(func(d kadm.DescribedLogDir) {
		d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
			if out[p.Topic] == nil {
				out[p.Topic] = map[int32]int64{}
			}
			out[p.Topic][p.Partition] = p.Size
		})
	})
	return out
}

// topicRow is one topic of `topics list`.
type topicRow struct {
	Topic      string `json:"topic"`
	Partitions int    `json:"partitions"`
	Records    int64  `json:"records"`
	Start      int64  `json:"start"`
	End        int64  `json:"end"`
	// Bytes is null when a partition's broker did not say ("-" in the table).
	Bytes *int64 `json:"bytes"`
}

func topicsList(ctx context.Context, adm *kadm.Client, w io.Writer, names []string, format outputFormat) error {
	details, err := adm.ListTopics(ctx, names...)
	if err != nil {
		return fmt.Errorf("list topics: %w", err)
	}
	starts, err := adm.ListStartOffsets(ctx, details.Names()...)
	if err != nil {
		return fmt.Errorf("start offsets: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, details.Names()...)
	if err != nil {
		return fmt.Errorf("end offsets: %w", err)
	}
	sizes := partitionSizes(ctx, adm)
	names = details.Names()
	sort.Strings(names)
	rows := []topicRow{}
	var errs []error
	for _, name := range names {
		t := details[name]
		if t.Err != nil {
			// A topic asked for by name that is not there: said on
			// stderr, and the exit status is 1.
			if errors.Is(t.Err, kerr.UnknownTopicOrPartition) {
				errs = append(errs, fmt.Errorf("topic %s: no such topic%s", name, noTopicHint(name, "")))
			} else {
				errs = append(errs, fmt.Errorf("topic %s: %w", name, t.Err))
			}
			continue
		}
		row := topicRow{Topic: name, Partitions: len(t.Partitions)}
		var bytes int64
		known := true
		for p := range t.Partitions {
			if o, ok := starts.Lookup(name, p); ok {
				row.Start += o.Offset
			}
			if o, ok := ends.Lookup(name, p); ok {
				row.End += o.Offset
			}
			n, ok := sizes[name][p]
			bytes, known = bytes+n, known && ok
		}
		row.Records = row.End - row.Start
		if known {
			row.Bytes = &bytes
		}
		rows = append(rows, row)
	}
	if err := writeTopicRows(w, rows, format, len(names) > 0 && len(errs) == len(names)); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// writeTopicRows writes `topics list` as format; noneFound (only names
// that are not topics were asked for) writes no table header above the
// errors, and JSON's empty list.
func writeTopicRows(w io.Writer, rows []topicRow, format outputFormat, noneFound bool) error {
	if format == outputJSON {
		return writeJSON(w, rows)
	}
	if noneFound {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITIONS\tRECORDS\tSTART\tEND\tBYTES")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\n", r.Topic, r.Partitions, r.Records, r.Start, r.End, bytesText(r.Bytes))
	}
	return tw.Flush()
}

// topicDescription is `topics describe`.
type topicDescription struct {
	Topic string `json:"topic"`
	// ID is the topic's id as Kafka's tools write it.
	ID         string            `json:"id"`
	Configs    []describedConfig `json:"configs"`
	Partitions []partitionRow    `json:"partitions"`
}

// partitionRow is one partition of `topics describe`.
type partitionRow struct {
	Partition int32  `json:"partition"`
	Leader    int32  `json:"leader"`
	Start     int64  `json:"start"`
	End       int64  `json:"end"`
	Records   int64  `json:"records"`
	Bytes     *int64 `json:"bytes"`
}

func topicsDescribe(ctx context.Context, adm *kadm.Client, w io.Writer, name string, format outputFormat) error {
	details, err := adm.ListTopics(ctx, name)
	if err != nil {
		return fmt.Errorf("describe %s: %w", name, err)
	}
	t, ok := details[name]
	if !ok || t.Err != nil {
		if !ok || errors.Is(t.Err, kerr.UnknownTopicOrPartition) {
			return fmt.Errorf("describe %s: no such topic%s", name, noTopicHint(name, ""))
		}
		return fmt.Errorf("describe %s: %w", name, t.Err)
	}
	starts, _ := adm.ListStartOffsets(ctx, name)
	ends, _ := adm.ListEndOffsets(ctx, name)
	sizes := partitionSizes(ctx, adm)
	d := topicDescription{
		Topic: name,
		// As Kafka's tools write a Uuid (kadm's String is padded standard base64).
		ID:         base64.RawURLEncoding.EncodeToString(t.ID[:]),
		Configs:    describedConfigs(ctx, adm, name),
		Partitions: []partitionRow{},
	}
	for _, p := range t.Partitions.Sorted() {
		s, _ := starts.Lookup(name, p.Partition)
		e, _ := ends.Lookup(name, p.Partition)
		row := partitionRow{Partition: p.Partition, Leader: p.Leader, Start: s.Offset, End: e.Offset, Records: e.Offset - s.Offset}
		if n, known := sizes[name][p.Partition]; known {
			row.Bytes = &n
		}
		d.Partitions = append(d.Partitions, row)
	}
	if format == outputJSON {
		return writeJSON(w, d)
	}
	fmt.Fprintf(w, "topic %s  id %s  partitions %d\n", d.Topic, d.ID, len(d.Partitions))
	if line := topicConfigLine(d.Configs); line != "" {
		fmt.Fprintln(w, line)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTITION\tLEADER\tSTART\tEND\tRECORDS\tBYTES")
	for _, p := range d.Partitions {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%s\n", p.Partition, p.Leader, p.Start, p.End, p.Records, bytesText(p.Bytes))
	}
	return tw.Flush()
}

// describedConfig is one of a topic's retention and segment configs as the
// broker reports it, with where its value comes from: "topic" (the topic
// sets it), "default" (built in) or "broker" (the broker's setting:
// weir.yaml's broker.retention, Kafka's server.properties or cluster-wide
// configs).
type describedConfig struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// describedConfigs are the retention and segment configs the broker reports
// for topic; none when it reports none (ACLs without DESCRIBE_CONFIGS).
func describedConfigs(ctx context.Context, adm *kadm.Client, topic string) []describedConfig {
	out := []describedConfig{}
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return out
	}
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		return out
	}
	for _, key := range []string{"retention.ms", "retention.bytes", "segment.bytes", "segment.ms"} {
		for _, c := range rc.Configs {
			if c.Key != key || c.Value == nil {
				continue
			}
			source := "topic"
			switch c.Source {
			case kmsg.ConfigSourceDefaultConfig:
				source = "default"
			case kmsg.ConfigSourceStaticBrokerConfig, kmsg.ConfigSourceDynamicBrokerConfig, kmsg.ConfigSourceDynamicDefaultBrokerConfig:
				source = "broker"
			}
			out = append(out, describedConfig{Key: key, Value: *c.Value, Source: source})
		}
	}
	return out
}

// topicConfigLine is configs each with a reading ("retention.ms=172800000
// (2d)") and, for a value the topic does not set, where it comes from:
// "(7d, default)" built in, "(7d, broker default)" the broker's setting.
func topicConfigLine(configs []describedConfig) string {
	var parts []string
	for _, c := range configs {
		reading := configReading(c.Key, c.Value)
		switch c.Source {
		case "default":
			reading += ", default"
		case "broker":
			reading += ", broker default"
		}
		parts = append(parts, fmt.Sprintf("%s=%s (%s)", c.Key, c.Value, reading))
	}
	return strings.Join(parts, "  ")
}

// configReading is a topic config's value as a person reads it: a
// duration, a size, or what -1 means.
func configReading(key, value string) string {
	n, err := strconv.ParseInt(value, 10, 64)
	switch {
	case err != nil:
		return value
	case n == -1 && key == "retention.ms", n == math.MaxInt64 && strings.HasSuffix(key, ".ms"):
		return "for ever" // Long.MAX_VALUE: Kafka's "never" for segment.ms and often retention.ms
	case n == -1:
		return "no bound"
	case strings.HasSuffix(key, ".ms"):
		return msText(n)
	}
	return humanBytes(n)
}

// msText is n milliseconds in the largest unit that divides it (2d, 1h,
// 90s), as the config file takes durations.
func msText(n int64) string {
	for _, u := range []struct {
		ms   int64
		unit string
	}{{86_400_000, "d"}, {3_600_000, "h"}, {60_000, "m"}, {1000, "s"}} {
		if n >= u.ms && n%u.ms == 0 {
			return strconv.FormatInt(n/u.ms, 10) + u.unit
		}
	}
	return strconv.FormatInt(n, 10) + "ms"
}

// bytesText is a size, or "-" if not known: "0B" would read as empty.
func bytesText(n *int64) string {
	if n == nil {
		return "-"
	}
	return humanBytes(*n)
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f%ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// topicsSubcommands are topics' subcommands, for suggest.
var topicsSubcommands = []string{"list", "describe", "create", "alter", "delete"}

// pipelineTopics are the topics weir run makes as their first record
// comes, by their default names.
var pipelineTopics = []string{telemetry.TopicRawSyslog, telemetry.TopicRawSNMP, telemetry.TopicRawTraps, telemetry.TopicRawGNMI,
	telemetry.TopicEnrichedSyslog, telemetry.TopicEnrichedMetrics, telemetry.TopicEvents}

// noTopicHint follows "no such topic" for a topic the broker does not
// have: how to create it, that weir makes it (one of pipelineTopics), or, for dead.letter, that no sink has started
// yet (sinks make it when they start), or, for a Kafka internal topic's name
// (__consumer_offsets, __transaction_state), that weir's log keeps what
// those hold outside topics. also, if any, is said after it ("--follow
// waits for it").
func noTopicHint(name, also string) string {
	var h string
	switch {
	case strings.HasPrefix(name, "__"):
		return " (a Kafka cluster's internal topic: weir's embedded broker keeps consumer group offsets and producer state outside topics; see weir groups)"
	case name == telemetry.TopicDeadLetter:
		h = "no sink has started on this broker yet: sinks make it when they start"
	case slices.Contains(pipelineTopics, name):
		// Creating it by hand would be the wrong way: weir makes it, and
		// may be about to (a trap read right after it was sent).
		h = "not made yet: weir run makes it with its first record"
	default:
		h = "create it: weir topics create " + name
	}
	if also != "" {
		h += "; " + also
	}
	return " (" + h + ")"
}
