package enrich

import (
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestRestartThenPollAfterAFirstSampleChange: a syslog line said Gi0/3 went
// down; every poll says up (it came back before the next poll, its up line
// lost), so the row's first poll, 10 s after the line, raised the
// interface_up that was missed (detector.firstMayChange). weir restarts,
// and the next polls say up again: the interface is in the state its last
// event said, no change. One interface_up in all, as without the restart.
// (The warm-up rebuilt the line's down as the object's state, but not the
// poll's up that answered it, as it cannot tell a row's first poll from
// the first of its window; so the first live poll more than dedup_window
// after the line raised interface_up a second time. The warm-up now takes
// the state the events topic last published: adoptPublished.)
func TestRestartThenPollAfterAFirstSampleChange(t *testing.T) {
	f := newLinkRestart(t)
	down := f.firstSampleAnswersTheLine()

	// The restart: workers as weir run starts them; the next polls, up.
	opts := f.after()
	defer startRunner(NewWorker(f.b, f.inv, NewClassifier(), opts...))()
	defer startRunner(NewMetricsWorker(f.b, f.inv, opts...))()
	f.produce(telemetry.TopicRawSNMP, f.poll(down.Add(15*time.Second), 1), f.poll(down.Add(45*time.Second), 1), f.poll(down.Add(50*time.Second), 1))
	waitCommitted(t, f.b, telemetry.TopicRawSNMP, 4)
	f.check("after the restart and two polls saying up", false,
		"interface_down core9 gi0/3 from raw.syslog", "interface_up core9 gi0/3 from raw.snmp")
}

// TestRestartThenLinkDownAgain: as in
// TestRestartThenPollAfterAFirstSampleChange, the row's first poll
// published the interface_up a syslog line's down missed. weir restarts,
// and a new line says Gi0/3 went down again, 40 s after the first (past
// the de-duplication window): a change, whose interface_down must be
// published. It was left out: the warm-up had rebuilt the first line's
// down as the object's state, and not the poll's up.
func TestRestartThenLinkDownAgain(t *testing.T) {
	f := newLinkRestart(t)
	down := f.firstSampleAnswersTheLine()

	opts := f.after()
	defer startRunner(NewWorker(f.b, f.inv, NewClassifier(), opts...))()
	defer startRunner(NewMetricsWorker(f.b, f.inv, opts...))()
	f.produce(telemetry.TopicRawSyslog, f.down(down.Add(40*time.Second)))
	waitCommitted(t, f.b, telemetry.TopicRawSyslog, 2)
	f.check("after the restart and a new link down", false, "interface_down core9 gi0/3 from raw.syslog",
		"interface_up core9 gi0/3 from raw.snmp", "interface_down core9 gi0/3 from raw.syslog")
}

// firstSampleAnswersTheLine runs the process before the restart: the
// line that Gi0/3 went down, then the row's first poll, 10 s later, which
// finds it up and raises the missed interface_up. It returns when the line
// was received.
func (f *linkRestart) firstSampleAnswersTheLine() time.Time {
	f.t.Helper()
	down := f.t0.Add(5 * time.Second)
	opts := f.before()
	f.produce(telemetry.TopicRawSyslog, f.down(down))
	stopS := startRunner(NewWorker(f.b, f.inv, NewClassifier(), opts...))
	waitCommitted(f.t, f.b, telemetry.TopicRawSyslog, 1)
	f.produce(telemetry.TopicRawSNMP, f.poll(down.Add(10*time.Second), 1))
	stopM := startRunner(NewMetricsWorker(f.b, f.inv, opts...))
	waitCommitted(f.t, f.b, telemetry.TopicRawSNMP, 1)
	stopS()
	stopM()
	f.check("before the restart", true, "interface_down core9 gi0/3 from raw.syslog", "interface_up core9 gi0/3 from raw.snmp")
	return down
}

// TestRestartThenPollAnsweringAReportNotAnsweredBefore: the other side
// of TestRestartThenPollAfterAFirstSampleChange. A poll saw Gi0/3 come up
// (interface_up), then a syslog line said it went down; weir restarts
// before a poll more than dedup_window after the line. The events topic
// has an interface_up of the object, but from before the line: the
// missed interface_up was not published, and the live poll publishes it.
func TestRestartThenPollAnsweringAReportNotAnsweredBefore(t *testing.T) {
	f := newLinkRestart(t)
	down := f.t0.Add(5 * time.Second)
	opts := f.before()
	f.produce(telemetry.TopicRawSNMP, f.poll(f.t0, 2), f.poll(f.t0.Add(time.Second), 1))
	stopM := startRunner(NewMetricsWorker(f.b, f.inv, opts...))
	waitCommitted(t, f.b, telemetry.TopicRawSNMP, 2)
	f.produce(telemetry.TopicRawSyslog, f.down(down))
	stopS := startRunner(NewWorker(f.b, f.inv, NewClassifier(), opts...))
	waitCommitted(t, f.b, telemetry.TopicRawSyslog, 1)
	stopS()
	stopM()
	want := []string{"interface_up core9 gi0/3 from raw.snmp", "interface_down core9 gi0/3 from raw.syslog"}
	f.check("before the restart", true, want...)

	opts = f.after()
	defer startRunner(NewWorker(f.b, f.inv, NewClassifier(), opts...))()
	defer startRunner(NewMetricsWorker(f.b, f.inv, opts...))()
	f.produce(telemetry.TopicRawSNMP, f.poll(down.Add(10*time.Second), 1), f.poll(down.Add(45*time.Second), 1))
	waitCommitted(t, f.b, telemetry.TopicRawSNMP, 4)
	f.check("after the restart and two polls saying up", false, append(want, "interface_up core9 gi0/3 from raw.snmp")...)
}
