package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestGroupsReset: `weir groups reset` moves a group's committed offsets
// as kafka-consumer-groups.sh --reset-offsets does. A dry run commits
// nothing; --execute to the start makes the group (read by librdkafka,
// kcat -G, where installed) read everything again; --shift-by moves one
// partition back; times find offsets by record time; a group with a
// member is refused, saying why.
func TestGroupsReset(t *testing.T) {
	t.Parallel()
	p := startWeir(t, t.TempDir())
	if _, errs, err := p.cli(t, "", "topics", "create", "rst", "--partitions", "3"); err != nil {
		t.Fatal(err, errs)
	}
	all := produceSpread(t, p, "rst", "r", 6, 4)
	slices.Sort(all)
	consume := func() []string {
		t.Helper()
		out, errs, err := p.cli(t, "", "consume", "rst", "--group", "rg", "--from-beginning")
		if err != nil {
			t.Fatalf("consume --group: %v\n%s%s", err, out, errs)
		}
		return valuesOf(out)
	}
	reset := func(args ...string) (string, string, error) {
		t.Helper()
		return p.cli(t, "", append([]string{"groups", "reset", "rg"}, args...)...)
	}
	mustReset := func(args ...string) string {
		t.Helper()
		out, errs, err := reset(args...)
		if err != nil {
			t.Fatalf("groups reset %s: %v\n%s%s", strings.Join(args, " "), err, out, errs)
		}
		return out
	}
	if got := consume(); !slices.Equal(got, all) {
		t.Fatalf("first read: %d records, want %d", len(got), len(all))
	}
	wantCaughtUp(t, p, "rg", "rst")

	// A dry run prints the plan and moves nothing.
	out := mustReset("--topic", "rst", "--to-earliest")
	if !strings.Contains(out, "dry run") || !strings.Contains(out, "LAG AFTER") {
		t.Fatalf("dry run printed:\n%s", out)
	}
	wantCaughtUp(t, p, "rg", "rst")

	// To the start, for real: the group reads it all again; by kcat
	// where it is installed (a client none of us wrote), else weir.
	if out := mustReset("--topic", "rst", "--to-earliest", "--execute"); !strings.Contains(out, "committed NEW for group rg on 3 partition(s) (--to-earliest)") {
		t.Fatalf("reset --execute printed:\n%s", out)
	}
	var again []string
	if _, err := exec.LookPath("kcat"); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		kout, err := exec.CommandContext(ctx, "kcat", "-b", p.KafkaAddr, "-G", "rg", "rst",
			"-X", "auto.offset.reset=latest", "-c", fmt.Sprint(len(all)), "-q", "-f", "%s\n").Output()
		if err != nil {
			t.Fatalf("kcat -G after the reset: %v\n%s", err, p.Logs())
		}
		again = strings.Fields(string(kout))
		slices.Sort(again)
	} else {
		again = consume()
	}
	if !slices.Equal(again, all) {
		t.Fatalf("after reset to the start the group read %d records, want all %d again", len(again), len(all))
	}
	wantCaughtUp(t, p, "rg", "rst")

	// An offset past the end goes to the end, saying so.
	if out := mustReset("--topic", "rst", "--to-offset", "1000"); !strings.Contains(out, "3 partition(s): --to-offset asks for an offset outside the log") {
		t.Fatalf("--to-offset past the end printed:\n%s", out)
	}
	// Partition 0 back by 2: those two records, nothing else.
	mustReset("--topic", "rst", "--partition", "0", "--shift-by", "-2", "--execute")
	if got := consume(); len(got) != 2 {
		t.Fatalf("after --shift-by -2 on one partition the group read %v, want 2 records", got)
	}
	// By time: an hour ago is before every record (the start); a time
	// ahead is after them all (the end).
	mustReset("--all-topics", "--by-duration", "1h", "--execute")
	if got := consume(); !slices.Equal(got, all) {
		t.Fatalf("after --by-duration 1h the group read %d records, want all %d", len(got), len(all))
	}
	mustReset("--topic", "rst", "--to-datetime", time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "--execute")
	wantCaughtUp(t, p, "rg", "rst")

	// A group not there yet (a typo of rg?) is made by --execute, as
	// Kafka's tool does; the dry run says so.
	if out, _, err := p.cli(t, "", "groups", "reset", "rgg", "--topic", "rst", "--to-earliest"); err != nil ||
		!strings.Contains(out, "group rgg has no members and no committed offsets: --execute makes it") {
		t.Errorf("dry run of a group not there: %v\n%s", err, out)
	}
	if out := mustReset("--topic", "rst", "--to-latest"); strings.Contains(out, "no members and no committed offsets") {
		t.Errorf("dry run of group rg, which has committed offsets, says it has none:\n%s", out)
	}

	// Usage errors exit 2 and say what to give.
	for _, args := range [][]string{
		{"--topic", "rst"},
		{"--topic", "rst", "--to-earliest", "--to-latest"},
		{"--to-earliest"},
		{"--topic", "rst", "--to-datetime", "yesterday"},
	} {
		_, errs, err := reset(args...)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(errs, "--") {
			t.Errorf("groups reset rg %s: %v, stderr %q; want exit 2 naming the flags to give", strings.Join(args, " "), err, errs)
		}
	}

	// A group with a member is refused, and nothing moves.
	if _, err := exec.LookPath("kcat"); err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	member := exec.CommandContext(ctx, "kcat", "-b", p.KafkaAddr, "-G", "rg", "rst", "-q")
	if err := member.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); member.Wait() }()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if out, _, _ := p.cli(t, "", "groups", "describe", "rg"); strings.Contains(out, "members 1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("kcat never joined group rg")
		}
	}
	_, errs, err := reset("--topic", "rst", "--to-earliest", "--execute")
	if err == nil || !strings.Contains(errs, "member") || !strings.Contains(errs, "stop them first") {
		t.Fatalf("reset of a group with a member: %v, stderr %q", err, errs)
	}
	wantCaughtUp(t, p, "rg", "rst")
}

// TestGroupsResetByTime: --to-datetime moves to the first record at or
// after the time, by the records' own timestamps, and --to-offset stays
// within the log, on weir's listener and on a Kafka cluster (kfake) alike.
func TestGroupsResetByTime(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 14, 0, 0, 0, time.UTC)
	for _, backend := range []string{"weir", "kafka"} {
		t.Run(backend, func(t *testing.T) {
			addr, cl := backendClient(t, backend)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			adm := kadm.NewClient(cl)
			if _, err := adm.CreateTopic(ctx, 1, 1, nil, "bytime"); err != nil {
				t.Fatal(err)
			}
			// A record a minute from t0: offset i at t0 + i minutes.
			for i := range 10 {
				r := &kgo.Record{Topic: "bytime", Partition: 0, Value: []byte{'0' + byte(i)}, Timestamp: t0.Add(time.Duration(i) * time.Minute)}
				if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			committed := func() int64 {
				t.Helper()
				os, err := adm.FetchOffsets(ctx, "tg")
				if err != nil {
					t.Fatal(err)
				}
				o, ok := os.Lookup("bytime", 0)
				if !ok || o.Err != nil {
					t.Fatalf("no committed offset: %+v", o)
				}
				return o.At
			}
			reset := func(args ...string) {
				t.Helper()
				var stdout, stderr bytes.Buffer
				args = append([]string{"groups", "reset", "tg", "--brokers", addr, "--topic", "bytime", "--execute"}, args...)
				if err := dispatch(ctx, args, strings.NewReader(""), &stdout, &stderr); err != nil {
					t.Fatalf("%s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
				}
			}
			for _, c := range []struct {
				args []string
				want int64
			}{
				{[]string{"--to-datetime", t0.Add(3*time.Minute + 30*time.Second).Format(time.RFC3339)}, 4},
				{[]string{"--to-datetime", "2026-12-04T15:03:00+01:00"}, 3}, // the same instant as 14:03Z
				// Record times are whole milliseconds: a time half a
				// millisecond past 14:02 is after the record of 14:02.
				{[]string{"--to-datetime", "2026-12-04T14:02:00.0005Z"}, 3},
				{[]string{"--to-offset", "99"}, 10},
				{[]string{"--shift-by", "-4"}, 6},
				{[]string{"--to-datetime", t0.Add(-time.Hour).Format(time.RFC3339)}, 0},
				{[]string{"--to-datetime", t0.Add(time.Hour).Format(time.RFC3339)}, 10},
			} {
				reset(c.args...)
				if got := committed(); got != c.want {
					t.Errorf("after %s: committed %d, want %d", strings.Join(c.args, " "), got, c.want)
				}
			}
		})
	}
}

// TestGroupsResetKafkaSpellings: what an operator (or a script) written
// for kafka-consumer-groups.sh --reset-offsets passes works the same here:
// --dry-run (the flag Kafka asks scripts to give), --topic T:P,P (Kafka's
// way to name partitions) and --by-duration in ISO 8601 (PT1H, P1DT2H).
func TestGroupsResetKafkaSpellings(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := startWeir(t, t.TempDir())
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.KafkaAddr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "ks"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "ks2"); err != nil {
		t.Fatal(err)
	}
	// Four records in each partition, two hours old and one hour old.
	now := time.Now()
	for _, topic := range []string{"ks", "ks2"} {
		for part := range int32(3) {
			if topic == "ks2" && part > 0 {
				break
			}
			for i := range 4 {
				ts := now.Add(-2 * time.Hour)
				if i >= 2 {
					ts = now.Add(-time.Hour)
				}
				r := &kgo.Record{Topic: topic, Partition: part, Value: []byte{'0' + byte(i)}, Timestamp: ts}
				if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	run := func(args ...string) (string, error) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args = append([]string{"groups", "reset", "kg", "--brokers", p.KafkaAddr}, args...)
		err := dispatch(ctx, args, strings.NewReader(""), &stdout, &stderr)
		if err != nil {
			return stdout.String(), &cliError{err, stderr.String()}
		}
		return stdout.String(), nil
	}
	committed := func() map[string]int64 {
		t.Helper()
		os, err := adm.FetchOffsets(ctx, "kg")
		if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			t.Fatal(err)
		}
		got := map[string]int64{}
		os.Each(func(o kadm.OffsetResponse) { got[fmt.Sprintf("%s/%d", o.Topic, o.Partition)] = o.At })
		return got
	}
	want := func(what string, w map[string]int64) {
		t.Helper()
		if got := committed(); fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("after %s: committed %v, want %v", what, got, w)
		}
	}

	if out, err := run("--topic", "ks", "--to-latest", "--dry-run"); err != nil || !strings.Contains(out, "dry run") {
		t.Fatalf("--dry-run: %v\n%s", err, out)
	}
	want("--dry-run", map[string]int64{})
	if _, err := run("--topic", "ks", "--to-latest", "--dry-run", "--execute"); exitCode(err) != 2 {
		t.Errorf("--dry-run --execute: %v, want a usage error", err)
	}

	// Kafka's partitions of a topic: ks:0,2 and, in the same command, all
	// of ks2.
	if out, err := run("--topic", "ks:0,2", "--topic", "ks2", "--to-latest", "--execute"); err != nil {
		t.Fatalf("--topic ks:0,2 --topic ks2: %v\n%s", err, out)
	}
	want("--topic ks:0,2 --topic ks2", map[string]int64{"ks/0": 4, "ks/2": 4, "ks2/0": 4})
	for _, bad := range [][]string{
		{"--topic", "ks:0", "--partition", "1", "--to-latest"}, // two ways at once
		{"--topic", "ks:x", "--to-latest"},
		{"--topic", "ks:", "--to-latest"},
	} {
		if _, err := run(bad...); exitCode(err) != 2 {
			t.Errorf("%s: %v, want a usage error", strings.Join(bad, " "), err)
		}
	}
	if _, err := run("--topic", "ks:7", "--to-latest"); err == nil || !strings.Contains(err.Error(), "no partition 7") {
		t.Errorf("--topic ks:7: %v, want: no partition 7", err)
	}

	// ISO 8601 durations, as Kafka's --by-duration takes them: 90 minutes
	// back is between the two-hour-old and one-hour-old records.
	for _, d := range []string{"PT90M", "PT1H30M", "pt1.5h", "PT5400S", "P0DT1H30M"} {
		if _, err := run("--topic", "ks", "--to-earliest", "--execute"); err != nil {
			t.Fatal(err)
		}
		if out, err := run("--topic", "ks", "--by-duration", d, "--execute"); err != nil {
			t.Errorf("--by-duration %s: %v\n%s", d, err, out)
			continue
		}
		want("--by-duration "+d, map[string]int64{"ks/0": 2, "ks/1": 2, "ks/2": 2, "ks2/0": 4})
	}
	if out, err := run("--topic", "ks", "--by-duration", "P1D", "--execute"); err != nil {
		t.Errorf("--by-duration P1D: %v\n%s", err, out)
	}
	want("--by-duration P1D", map[string]int64{"ks/0": 0, "ks/1": 0, "ks/2": 0, "ks2/0": 4})
	for _, bad := range []string{"P", "PT", "-PT1H", "PT0S", "P1H", "PT1D"} {
		if _, err := run("--topic", "ks", "--by-duration", bad); exitCode(err) != 2 {
			t.Errorf("--by-duration %s: %v, want a usage error", bad, err)
		}
	}
}

// TestGroupsResetEnrichBackOnWeirsLog: enrich on weir's log skips the
// inputs whose outputs are there already (src_offset, exactly once), so a
// reset that moves it back re-derives nothing; the plan says so, and how
// to enrich again. A Kafka cluster's enrich (transactions) is not told
// it, nor is a move forward or another group.
func TestGroupsResetEnrichBackOnWeirsLog(t *testing.T) {
	for _, backend := range []string{"weir", "kafka"} {
		t.Run(backend, func(t *testing.T) {
			// Without enrichment: a group with members is not reset.
			addr, cl := backendClient(t, backend, "--roles", "collect,sink")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			adm := kadm.NewClient(cl)
			if _, err := adm.CreateTopic(ctx, 1, 1, nil, "raw.syslog"); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
				t.Fatal(err)
			}
			for i := range 10 {
				if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "raw.syslog", Partition: 0, Value: []byte{'0' + byte(i)}}).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			for _, g := range []string{"enrich", "other"} {
				var at kadm.Offsets
				at.AddOffset("raw.syslog", 0, 6, -1)
				if _, err := adm.CommitOffsets(ctx, g, at); err != nil {
					t.Fatal(err)
				}
			}
			plan := func(group, to string) string {
				t.Helper()
				var stdout, stderr bytes.Buffer
				args := []string{"groups", "reset", group, "--brokers", addr, "--topic", "raw.syslog", to}
				if err := dispatch(ctx, args, strings.NewReader(""), &stdout, &stderr); err != nil {
					t.Fatalf("%s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
				}
				return stdout.String()
			}
			const note = "re-derives nothing"
			if got := plan("enrich", "--to-earliest"); strings.Contains(got, note) != (backend == "weir") {
				t.Errorf("enrich back to the start on %s:\n%s", backend, got)
			} else if backend == "weir" && !strings.Contains(got, "weir topics delete") {
				t.Errorf("the note does not say how to enrich again:\n%s", got)
			}
			if got := plan("enrich", "--to-latest"); strings.Contains(got, note) {
				t.Errorf("enrich forward:\n%s", got)
			}
			if got := plan("other", "--to-earliest"); strings.Contains(got, note) {
				t.Errorf("another group:\n%s", got)
			}
		})
	}
}
