package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// `weir COMMAND -h` prints the command's usage and succeeds, as the usage
// text says ("Run 'weir COMMAND -h' for a command's flags"), also for the
// commands with subcommands, which took -h for an unknown subcommand.
func TestHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-h"}, "weir run [-c FILE]"},
		// -c is optional, as check -h says (configs/weir.yaml without it).
		{[]string{"-h"}, "weir check [-c FILE] [--skip-files]"},
		{[]string{"topics", "-h"}, "weir topics create TOPIC"},
		{[]string{"topics", "--help"}, "weir topics create TOPIC"},
		{[]string{"groups", "-h"}, "weir groups describe GROUP"},
		{[]string{"groups", "help"}, "weir groups describe GROUP"},
		{[]string{"version", "-h"}, "Usage: weir version"},
		{[]string{"version", "--help"}, "Usage: weir version"},
	} {
		var stdout, stderr bytes.Buffer
		code := code(dispatch(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr))
		if code != 0 || !strings.Contains(stdout.String(), tc.want) || stderr.Len() != 0 {
			t.Errorf("weir %s: exit %d, stdout %q, stderr %q", strings.Join(tc.args, " "), code, stdout.String(), stderr.String())
		}
	}
	// A command's -h shows how it is called, its arguments too, not
	// only the flag package's "Usage of weir consume:".
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"consume", "-h"}, "Usage: weir consume [flags] TOPIC\n"},
		{[]string{"produce", "-h"}, "Usage: weir produce [flags] TOPIC"},
		{[]string{"topics", "describe", "-h"}, "Usage: weir topics describe [flags] TOPIC\n"},
		{[]string{"topics", "create", "-h"}, "Usage: weir topics create TOPIC [--partitions N]"},
		{[]string{"topics", "alter", "-h"}, "Usage: weir topics alter TOPIC [--retention 3d]"},
		{[]string{"groups", "delete", "-h"}, "Usage: weir groups delete [flags] GROUP\n"},
		{[]string{"groups", "list", "-h"}, "Usage: weir groups list [flags]\n"},
		{[]string{"groups", "reset", "-h"}, "Usage: weir groups reset GROUP (--topic T | --all-topics)"},
	} {
		var stdout, stderr bytes.Buffer
		dispatch(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr)
		if out := stdout.String() + stderr.String(); !strings.HasPrefix(out, tc.want) || !strings.Contains(out, "-brokers") {
			t.Errorf("weir %s: %q, want it to start %q and list the flags", strings.Join(tc.args, " "), out, tc.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := code(dispatch(context.Background(), []string{"topics", "lisst"}, strings.NewReader(""), &stdout, &stderr)); code != 2 ||
		!strings.Contains(stderr.String(), "weir topics list") {
		t.Errorf("weir topics lisst: exit %d, stderr %q", code, stderr.String())
	}
	// An unknown flag is a usage error (2) for every command, as an
	// unknown command is; it exited 1, as a failure does.
	for _, args := range [][]string{{"run", "--bogus"}, {"consume", "t", "--bogus"}, {"topics", "list", "--bogus"}, {"check", "--bogus"}, {"produce", "t", "--max", "1"},
		{"produce", "t", "--header", "novalue"}, {"topics", "create", "t", "--config", "novalue"},
		{"topics", "create", "t", "--retention", "5x"}, {"topics", "create", "t", "--retention-bytes", "lots"}} {
		if c := code(dispatch(context.Background(), args, strings.NewReader(""), &stdout, &stderr)); c != 2 {
			t.Errorf("weir %s: exit %d, want 2", strings.Join(args, " "), c)
		}
	}
	// A client flag before the command says where it goes.
	err := dispatch(context.Background(), []string{"--brokers", "127.0.0.1:1", "consume", "events"}, strings.NewReader(""), &stdout, &stderr)
	if code(err) != 2 || err == nil || !strings.Contains(err.Error(), "flags go after it") {
		t.Errorf("weir --brokers H consume: exit %d, %v", code(err), err)
	}
}

func code(err error) int {
	if err == nil {
		return 0
	}
	return exitCode(err)
}

// TestMisspeltCommandsAndFlagsSuggested: a command, subcommand or flag
// one slip away from one weir has is named in the error ("did you
// mean"); one far from any is not guessed at.
func TestMisspeltCommandsAndFlagsSuggested(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"topic", "list"}, `unknown command "topic" (did you mean topics?)`},
		{[]string{"topics", "lst"}, `unknown subcommand "lst" (did you mean list?)`},
		{[]string{"groups", "rest", "g"}, `unknown subcommand "rest" (did you mean reset?)`},
		{[]string{"consume", "events", "--from-begining"}, "did you mean --from-beginning?"},
		{[]string{"florp"}, `unknown command "florp"`},
	} {
		var stdout, stderr bytes.Buffer
		err := dispatch(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr)
		if code(err) != 2 {
			t.Errorf("weir %s: exit %d, want 2", strings.Join(tc.args, " "), code(err))
		}
		said := stderr.String()
		if err != nil {
			said += err.Error()
		}
		if !strings.Contains(said, tc.want) {
			t.Errorf("weir %s: %q, want it to say %q", strings.Join(tc.args, " "), said, tc.want)
		}
		if tc.args[0] == "florp" && strings.Contains(said, "did you mean") {
			t.Errorf("weir florp: %q, a guess", said)
		}
	}
}

// A command's flags are listed as the README and the synopses write them:
// --follow, not the flag package's -follow; one-letter shorthands keep one
// dash.
func TestHelpListsLongFlagsWithTwoDashes(t *testing.T) {
	var stdout, stderr bytes.Buffer
	dispatch(context.Background(), []string{"consume", "-h"}, strings.NewReader(""), &stdout, &stderr)
	out := stdout.String() + stderr.String()
	for _, want := range []string{"\n  --brokers string\n", "\n  --follow\n", "\n  --from-beginning\n", "\n  -b string\n", "\n  -f\tshorthand for --follow\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("weir consume -h lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\n  -follow") {
		t.Errorf("weir consume -h lists -follow with one dash:\n%s", out)
	}
}
