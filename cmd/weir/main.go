// Command weir is the network telemetry pipeline: `weir run` starts the
// collectors, the embedded broker and the sinks; the other subcommands are
// Kafka clients for looking at and feeding topics, on weir's embedded broker
// or on any Kafka cluster.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/weirnet/weir/internal/yamlerr"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `weir: network telemetry pipeline

Usage:
  weir run [-c FILE] [--data-dir DIR] [--kafka-listen ADDR] [--http-listen ADDR]
           [--syslog-listen ADDR] [--trap-listen ADDR] [--log-level L] [--roles collect,enrich,sink]
  weir topics list|describe|create|alter|delete [TOPIC] [flags]
  weir produce TOPIC [--key K] [--partition P] [--header k=v] [--timeout D] [--max-line-bytes N]
               (one record per line of stdin)
  weir consume TOPIC [--from-beginning | --since 15m] [--follow] [--max N] [--partition P --offset O] [--group G]
  weir groups list|describe|delete [GROUP]
  weir groups reset GROUP (--topic T | --all-topics) (--to-earliest | --to-latest | --to-datetime T | ...) [--execute]
  weir check [-c FILE] [--skip-files]
  weir classify [-c FILE] [--from ADDR] [LINE...]   (what enrichment makes of syslog lines; stdin without LINE)
  weir version

Client commands take --brokers HOST:PORT[,...] (default 127.0.0.1:9092, or
$WEIR_BROKERS) and work against weir's Kafka listener or any Kafka cluster;
for a secured cluster, --tls-ca/--tls-cert/--tls-key/--tls-server-name (or
--tls; --tls-insecure-skip-verify for a test broker's self-signed
certificate) and --sasl-mechanism/--sasl-username, the password in
$WEIR_SASL_PASSWORD (or --sasl-password).
Run 'weir COMMAND -h' for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal stops weir cleanly; a second one, while it does,
	// ends the process at once (the next start recovers the log). One
	// within repeatWindow of the first is the same stop, sent twice:
	// timeout(1) signals the process and then its process group, and a
	// stop it asked for ended half the time in a recovery.
	go func() { <-ctx.Done(); time.Sleep(repeatWindow); stop() }()
	if code := execute(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); code != 0 {
		os.Exit(code)
	}
}

// execute runs the command of args and returns its exit code: also 1
// when it succeeded but its output could not be written (a full disk), so
// a script does not take a cut-short output for all of it. A reader gone
// (`| head -1`) is no failure: it has what it wanted.
func execute(ctx context.Context, args []string, stdin io.Reader, stdout *os.File, stderr io.Writer) int {
	out := &checkedStdout{f: stdout}
	err := dispatch(ctx, args, stdin, out, stderr)
	if err == nil && out.failed != nil && !errors.Is(out.failed, syscall.EPIPE) {
		err = fmt.Errorf("writing the output: %w", out.failed)
	}
	if err != nil {
		return report(err, stderr)
	}
	return 0
}

// checkedStdout is stdout, keeping the first write that failed: most
// commands print a line or a table and ignore what Fprintf returns. The
// file is not embedded: its WriteString and ReadFrom would let
// io.WriteString and io.Copy write past Write.
type checkedStdout struct {
	f      *os.File
	failed error
}

func (c *checkedStdout) Write(b []byte) (int, error) {
	n, err := c.f.Write(b)
	if err != nil && c.failed == nil {
		c.failed = err
	}
	return n, err
}

// report prints err, unless the flag package has already printed it with
// the command's usage, and returns the exit code for it. Each line of an
// error of several (a config's) is prefixed alike.
func report(err error, stderr io.Writer) int {
	var done reportedError
	if !errors.Is(err, flag.ErrHelp) && !errors.As(err, &done) {
		for line := range strings.Lines(strings.TrimRight(err.Error(), "\n")) {
			fmt.Fprint(stderr, "weir: ", line)
		}
		fmt.Fprintln(stderr)
	}
	return exitCode(err)
}

// repeatWindow is how long after the first stop signal another one is
// taken for the same, not a second.
const repeatWindow = 250 * time.Millisecond

// exitError carries an exit code other than 1.
type exitError struct {
	code int
	err  error
}

// reportedError is an error already printed where it happened: the flag
// package prints its own, above the command's usage.
type reportedError struct{ error }

func (e reportedError) Unwrap() error { return e.error }

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 1
}

func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return &exitError{2, errors.New("no command")}
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return runCmd(ctx, rest, stderr)
	case "topics":
		return topicsCmd(ctx, rest, stdout, stderr)
	case "produce":
		return produceCmd(ctx, rest, stdin, stdout, stderr)
	case "consume":
		return consumeCmd(ctx, rest, stdout, stderr)
	case "groups":
		return groupsCmd(ctx, rest, stdout, stderr)
	case "check":
		return checkCmd(rest, stdout, stderr)
	case "classify":
		return classifyCmd(rest, stdin, stdout, stderr)
	case "version", "--version", "-version", "-v":
		if len(rest) == 1 && (rest[0] == "-h" || rest[0] == "--help" || rest[0] == "-help") {
			fmt.Fprintln(stdout, "Usage: weir version (prints weir's version, Go version and platform)")
			return nil
		}
		if len(rest) > 0 {
			return &exitError{2, fmt.Errorf("%s takes no arguments, not %q", cmd, rest[0])}
		}
		fmt.Fprintf(stdout, "weir %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return nil
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	if strings.HasPrefix(cmd, "-") {
		return &exitError{2, fmt.Errorf("%s before the command: flags go after it (weir COMMAND %s ...)", cmd, cmd)}
	}
	return &exitError{2, fmt.Errorf("unknown command %q%s", cmd, suggest(cmd, commands))}
}

// commands are weir's commands, for suggest.
var commands = []string{"run", "topics", "produce", "consume", "groups", "check", "classify", "version", "help"}

// suggest is " (did you mean K?)" when word is a misspelling of K among
// known, else "".
func suggest(word string, known []string) string {
	if k := yamlerr.ClosestKey(word, known); k != "" {
		return fmt.Sprintf(" (did you mean %s?)", k)
	}
	return ""
}

// flagGiven reports whether the command line set the flag name: for
// flags whose default stands for "not given" (-1), to refuse that value
// given.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// newFlagSet is a command's flag set whose -h shows how the command is
// called (its positional arguments, which the flag package's "Usage of
// weir consume:" left out), then its flags.
func newFlagSet(synopsis string, stderr io.Writer) *flag.FlagSet {
	name, _, _ := strings.Cut(synopsis, " [")
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\nFlags:\n", synopsis)
		printFlags(fs)
	}
	return fs
}

// printFlags is fs.PrintDefaults with two dashes before a long flag's
// name, as the README and the synopses write them (the flag package takes
// both, and shows one).
func printFlags(fs *flag.FlagSet) {
	var b strings.Builder
	out := fs.Output()
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(out)
	for line := range strings.Lines(b.String()) {
		if rest, ok := strings.CutPrefix(line, "  -"); ok && strings.IndexAny(rest, " \t\n") > 1 {
			line = "  --" + rest
		}
		io.WriteString(out, line)
	}
}

// subcommandSynopsis is the line of usage that shows how command is
// called ("weir topics create TOPIC [--partitions N] ..."), with [flags]
// after the command; command itself for one usage does not list.
func subcommandSynopsis(usage, command string) string {
	for line := range strings.Lines(usage) {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, command); ok && (rest == "" || rest[0] == ' ') {
			if strings.Contains(rest, "[-") {
				return line // it shows its flags
			}
			return command + " [flags]" + rest
		}
	}
	return command + " [flags]"
}

// isHelp tells a request for a command's usage (`weir topics -h`) from a
// subcommand.
func isHelp(arg string) bool {
	switch arg {
	case "help", "-h", "--help", "-help":
		return true
	}
	return false
}

// parseInterspersed parses flags that may come before, between or after the
// positional arguments (`weir topics create NAME --partitions 6`), which the
// flag package alone does not allow.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			// The flag package said it, with the usage; a misspelt
			// flag's likely meaning is said after them.
			if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
				var known []string
				fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
				if k := yamlerr.ClosestKey(strings.TrimLeft(name, "-"), known); k != "" {
					fmt.Fprintf(fs.Output(), "did you mean --%s?\n", k)
				}
			}
			// A usage error, as an unknown command or a missing topic
			// is: exit 2, as the flag package's own ExitOnError.
			return nil, &exitError{2, reportedError{err}}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
