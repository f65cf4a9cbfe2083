package main

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// produceSpread writes n records per key to topic, one `weir produce` per
// key, so the records land on several partitions.
func produceSpread(t *testing.T, p *weirProc, topic, prefix string, keys, n int) []string {
	t.Helper()
	var all []string
	for k := range keys {
		var in strings.Builder
		for i := range n {
			v := fmt.Sprintf("%s-k%d-%d", prefix, k, i)
			all = append(all, v)
			in.WriteString(v + "\n")
		}
		if out, errs, err := p.cli(t, in.String(), "produce", topic, "--key", fmt.Sprintf("%s-key-%d", prefix, k)); err != nil {
			t.Fatalf("produce: %v\n%s%s", err, out, errs)
		}
	}
	return all
}

// groupLags runs `weir groups describe` and returns its partition rows
// (topic, partition, committed, end, lag, member).
func groupLags(t *testing.T, p *weirProc, group, topic string) [][]string {
	t.Helper()
	out, errs, err := p.cli(t, "", "groups", "describe", group)
	if err != nil {
		t.Fatalf("groups describe %s: %v\n%s%s", group, err, out, errs)
	}
	var rows [][]string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 6 && f[0] == topic {
			rows = append(rows, f)
		}
	}
	if len(rows) == 0 {
		t.Fatalf("groups describe %s shows no partitions:\n%s", group, out)
	}
	return rows
}

// wantCaughtUp checks that the group has committed every partition to its
// end: lag 0 everywhere.
func wantCaughtUp(t *testing.T, p *weirProc, group, topic string) {
	t.Helper()
	for _, r := range groupLags(t, p, group, topic) {
		if r[4] != "0" || r[3] != "0" && r[2] != r[3] {
			t.Fatalf("group %s, partition %s: committed %s, end %s, lag %s; want everything committed", group, r[1], r[2], r[3], r[4])
		}
	}
}

// valuesOf extracts the values of `weir consume` output lines.
func valuesOf(out string) []string {
	var vals []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		_, v, _ := strings.Cut(l, `"value":"`)
		v, _, _ = strings.Cut(v, `"`)
		vals = append(vals, v)
	}
	slices.Sort(vals)
	return vals
}

// TestKcatBalancedConsumer: librdkafka's balanced consumer (kcat -G) joins
// a group on weir's listener, reads every record once and commits, so that
// `weir groups describe` shows no lag.
func TestKcatBalancedConsumer(t *testing.T) {
	if _, err := exec.LookPath("kcat"); err != nil {
		t.Skip("kcat not installed (apt-get install kcat); .ci/run installs it")
	}
	p := startWeir(t, t.TempDir())
	if _, errs, err := p.cli(t, "", "topics", "create", "grp", "--partitions", "6"); err != nil {
		t.Fatal(err, errs)
	}
	want := produceSpread(t, p, "grp", "kc", 12, 5)
	slices.Sort(want)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// -e does not work with -G in every kcat version: stop at a count.
	cmd := exec.CommandContext(ctx, "kcat", "-b", p.KafkaAddr, "-G", "kgroup", "grp",
		"-X", "auto.offset.reset=earliest", "-c", fmt.Sprint(len(want)), "-q", "-f", "%s\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kcat -G: %v\n%s", err, p.Logs())
	}
	got := strings.Fields(string(out))
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("kcat -G read %d records, want the %d produced, each once", len(got), len(want))
	}
	wantCaughtUp(t, p, "kgroup", "grp")
	if out, _, _ := p.cli(t, "", "groups", "list"); !strings.Contains(out, "kgroup") {
		t.Fatalf("groups list:\n%s", out)
	}
}

// TestConsumeGroup: `weir consume --group` resumes where the group's last
// run committed, so a second run prints only what was produced since.
func TestConsumeGroup(t *testing.T) {
	t.Parallel()
	p := startWeir(t, t.TempDir())
	if _, errs, err := p.cli(t, "", "topics", "create", "cg.topic", "--partitions", "6"); err != nil {
		t.Fatal(err, errs)
	}
	first := produceSpread(t, p, "cg.topic", "one", 12, 5)
	consume := func() []string {
		t.Helper()
		out, errs, err := p.cli(t, "", "consume", "cg.topic", "--group", "cg", "--from-beginning")
		if err != nil {
			t.Fatalf("consume --group: %v\n%s%s\n%s", err, out, errs, p.Logs())
		}
		return valuesOf(out)
	}
	slices.Sort(first)
	if got := consume(); !slices.Equal(got, first) {
		t.Fatalf("first run printed %d records, want the %d produced", len(got), len(first))
	}
	second := produceSpread(t, p, "cg.topic", "two", 3, 2)
	slices.Sort(second)
	if got := consume(); !slices.Equal(got, second) {
		t.Fatalf("second run printed %v, want only the new %v", got, second)
	}
	if got := consume(); len(got) != 0 {
		t.Fatalf("third run printed %v, want nothing", got)
	}
	wantCaughtUp(t, p, "cg", "cg.topic")

	if _, errs, err := p.cli(t, "", "consume", "cg.topic", "--group", "cg", "--partition", "1"); err == nil || !strings.Contains(errs, "--group") {
		t.Fatalf("--group with --partition: %v %s", err, errs)
	}
	out, errs, err := p.cli(t, "", "groups", "delete", "cg")
	if err != nil || !strings.Contains(out, "deleted group cg") {
		t.Fatalf("groups delete: %v %s%s", err, out, errs)
	}
	if _, errs, err := p.cli(t, "", "groups", "describe", "cg"); err == nil || !strings.Contains(errs, "no such group") {
		t.Fatalf("describe after delete: %v %s", err, errs)
	}
}

// TestGroupsDescribeStaticMember: `weir groups describe` shows a static
// member's group.instance.id (as kafka-consumer-groups.sh does), the name
// an operator gave it, beside the member ID the broker made up.
func TestGroupsDescribeStaticMember(t *testing.T) {
	if _, err := exec.LookPath("kcat"); err != nil {
		t.Skip("kcat not installed (apt-get install kcat); .ci/run installs it")
	}
	p := startWeir(t, t.TempDir())
	if _, errs, err := p.cli(t, "", "topics", "create", "static.t", "--partitions", "2"); err != nil {
		t.Fatal(err, errs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kcat", "-b", p.KafkaAddr, "-G", "sgroup", "static.t",
		"-X", "group.instance.id=collector-7", "-q")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	var out string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		out, _, _ = p.cli(t, "", "groups", "describe", "sgroup")
		if strings.Contains(out, "members 1") {
			break
		}
	}
	if !regexp.MustCompile(`INSTANCE ID`).MatchString(out) || !regexp.MustCompile(`\scollector-7\s`).MatchString(out) {
		t.Fatalf("groups describe does not show the static member's instance ID:\n%s", out)
	}
}
