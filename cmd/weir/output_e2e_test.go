package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// jqTrue runs jq's expression over doc (jq -e: exit 0 only when the last
// output is neither false nor null), so a test reads the JSON with a
// parser none of us wrote.
func jqTrue(t *testing.T, doc, expr string) {
	t.Helper()
	cmd := exec.Command("jq", "-e", expr)
	cmd.Stdin = strings.NewReader(doc)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("jq -e '%s': %v %s\non:\n%s", expr, err, out, doc)
	}
}

// TestOutputJSON: `-o json` of topics list/describe and groups
// list/describe is one JSON document with the figures the tables show,
// read here by jq, against weir's broker with a group that kcat (librdkafka)
// committed; an unknown format is a usage error.
func TestOutputJSON(t *testing.T) {
	p := startWeir(t, t.TempDir())
	mustCLI := func(args ...string) string {
		t.Helper()
		out, errs, err := p.cli(t, "", args...)
		if err != nil {
			t.Fatalf("weir %s: %v\n%s%s", strings.Join(args, " "), err, out, errs)
		}
		return out
	}
	if out, errs, err := p.cli(t, "", "topics", "create", "demo", "--partitions", "3", "--retention", "2d"); err != nil {
		t.Fatalf("create: %v %s%s", err, out, errs)
	}
	produceSpread(t, p, "demo", "v", 3, 4) // 12 records
	// A group that read 5 of them: kcat commits what it consumed.
	kcat := exec.Command("kcat", "-b", p.KafkaAddr, "-G", "jsongroup", "-o", "beginning", "-c", "5", "-q", "demo")
	if out, err := kcat.CombinedOutput(); err != nil {
		t.Fatalf("kcat -G: %v %s", err, out)
	}

	list := mustCLI("topics", "list", "-o", "json")
	jqTrue(t, list, `type == "array" and (map(select(.topic == "demo")) | length == 1)`)
	jqTrue(t, list, `.[] | select(.topic == "demo") | .partitions == 3 and .records == 12 and .start == 0 and .end == 12 and .bytes > 0`)
	jqTrue(t, mustCLI("topics", "list", "demo", "--output", "json"), `length == 1 and .[0].topic == "demo"`)

	desc := mustCLI("topics", "describe", "demo", "-o", "json")
	jqTrue(t, desc, `.topic == "demo" and (.id | test("^[A-Za-z0-9_-]{22}$"))`)
	jqTrue(t, desc, `(.partitions | length == 3) and (.partitions | map(.records) | add == 12) and (.partitions | map(.partition) == [0,1,2])`)
	jqTrue(t, desc, `.configs | map(select(.key == "retention.ms"))[0] | .value == "172800000" and .source == "topic"`)
	jqTrue(t, desc, `.configs | map(select(.key == "segment.bytes"))[0] | .source == "default"`)

	jqTrue(t, mustCLI("groups", "list", "-o", "json"), `.[] | select(.group == "jsongroup") | .state == "Empty" and .members == 0 and .lag == 7`)
	group := mustCLI("groups", "describe", "jsongroup", "-o", "json")
	jqTrue(t, group, `.group == "jsongroup" and .members == [] and (.partitions | length == 3)`)
	jqTrue(t, group, `.partitions | map(.end - (.committed // 0)) == map(.lag) and (map(.lag) | add == 7) and all(.member == null)`)

	// The tables still say the same.
	if out := mustCLI("groups", "describe", "jsongroup"); !strings.Contains(out, "group jsongroup  state Empty") {
		t.Errorf("groups describe table:\n%s", out)
	}
	if _, errs, err := p.cli(t, "", "topics", "list", "-o", "yaml"); cliExit(err) != 2 || !strings.Contains(errs, `"yaml" is not an output format`) {
		t.Errorf("-o yaml: %v %s", err, errs)
	}
	// Only list and describe take it.
	if _, errs, err := p.cli(t, "", "topics", "delete", "demo", "-o", "json"); cliExit(err) != 2 {
		t.Errorf("topics delete -o json: %v %s", err, errs)
	}
}

// cliExit is the exit status of a command p.cli ran (0 when it succeeded).
func cliExit(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
