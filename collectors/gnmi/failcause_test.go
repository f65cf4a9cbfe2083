package gnmi

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
)

// TestFailRunNewCauseSameCode: many causes share Unavailable; a failure
// of another cause (refused, then a certificate not trusted) is logged
// at once, while the same cause at other addresses or ports is not news.
func TestFailRunNewCauseSameCode(t *testing.T) {
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	unavailable := func(format string, a ...any) error {
		return fmt.Errorf("gnmi t: capabilities: %w", status.Error(codes.Unavailable, fmt.Sprintf(format, a...)))
	}
	f := failRun{every: time.Hour}
	now := time.Now()
	for i, err := range []error{
		unavailable(`connection error: desc = "transport: Error while dialing: dial tcp 192.0.2.10:57400: connect: connection refused"`),
		unavailable(`connection error: desc = "transport: Error while dialing: dial tcp 192.0.2.11:57400: connect: connection refused"`),
		unavailable(`connection error: desc = "transport: Error while dialing: dial tcp [2001:db8::1]:57401: connect: connection refused"`),
		unavailable(`connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"`),
		unavailable(`connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"`),
	} {
		f.failed(log, err, status.Code(err), time.Second, now.Add(time.Duration(i)*time.Second))
	}
	got := logLines(&logs, "level=WARN")
	if len(got) != 2 || !strings.Contains(got[0], "connection refused") || !strings.Contains(got[1], "unknown authority") {
		t.Errorf("warnings for refused x3, then unknown authority x2: want one for each cause:\n%s", strings.Join(got, "\n"))
	}
}

// TestFailRunCauseClass: what tells causes apart is the code and the
// message without addresses and numbers.
func TestFailRunCauseClass(t *testing.T) {
	a := causeClass(errors.New("read tcp 10.0.0.1:51234->10.0.0.2:57400: read: connection reset by peer"), codes.Unavailable)
	b := causeClass(errors.New("read tcp 10.0.0.1:40001->10.0.0.3:57400: read: connection reset by peer"), codes.Unavailable)
	if a != b {
		t.Errorf("same cause, other ports: %q != %q", a, b)
	}
	if c := causeClass(errors.New("read tcp 10.0.0.1:51234->10.0.0.2:57400: read: connection reset by peer"), codes.Internal); c == a {
		t.Errorf("another code, same class %q", c)
	}
}

// TestFailureAfterLoggedRecoveryWarned: a target that comes back (logged:
// "gnmi subscribed" with failed_attempts) and then fails again, as one
// that drops every few seconds does, has that failure warned of: it was
// logged at debug, and the log's last word was that the target was back
// for up to failLogEvery.
func TestFailureAfterLoggedRecoveryWarned(t *testing.T) {
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	s, addr := startFlaky(t, func(int) time.Duration { return 50 * time.Millisecond })
	startCollector(t, configs.GNMI{RetryMin: configs.Duration(5 * time.Millisecond), RetryMax: configs.Duration(time.Hour),
		Targets: []configs.GNMITarget{flakyTarget(addr)}}, WithLogger(log))
	waitFor(t, 20*time.Second, "the recovery logged", func() bool {
		return len(logLines(&logs, "level=INFO", "gnmi subscribed", "failed_attempts=1")) > 0
	})
	waitFor(t, 20*time.Second, "the failure after it warned of", func() bool {
		lines := strings.Split(logs.String(), "\n")
		for i, l := range lines {
			if strings.Contains(l, "gnmi subscribed") && strings.Contains(l, "failed_attempts=1") {
				for _, after := range lines[i+1:] {
					if strings.Contains(after, "level=WARN") && strings.Contains(after, "failed_attempts=") {
						return true
					}
				}
			}
		}
		return false
	})
	// Nor is one that keeps dropping warned of at every drop.
	waitFor(t, 20*time.Second, "10 sessions", func() bool { subs, _ := s.times(); return len(subs) >= 10 })
	if got := logLines(&logs, "level=WARN"); len(got) != 2 {
		t.Errorf("%d warnings for 10 drops, want 2 (the first failure, the failure after the recovery logged):\n%s", len(got), strings.Join(got, "\n"))
	}
}

// TestServingAgainAfterFailedAgain: when the last line logged is the
// failure after a recovery, the target then serving a while says so:
// the log's last word is not a failure of a target long back.
func TestServingAgainAfterFailedAgain(t *testing.T) {
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	_, addr := startFlaky(t, func(n int) time.Duration {
		if n <= 2 {
			return 20 * time.Millisecond
		}
		return time.Hour
	})
	// retry_max well above the 20ms sessions, so that a loaded machine's
	// delays cannot make one of them look like a session that served.
	startCollector(t, configs.GNMI{RetryMin: configs.Duration(5 * time.Millisecond), RetryMax: configs.Duration(2 * time.Second),
		Targets: []configs.GNMITarget{flakyTarget(addr)}}, WithLogger(log))
	waitFor(t, 20*time.Second, "serving again logged", func() bool {
		return len(logLines(&logs, "level=INFO", "gnmi stream serving again", "failed_attempts=2")) > 0
	})
	if got := logLines(&logs, "failed again after coming back"); len(got) != 1 {
		t.Errorf("%d lines of the failure after the recovery, want 1:\n%s", len(got), logs.String())
	}
}
