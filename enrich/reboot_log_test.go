package enrich

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestRestartLoggedAndTrappedIsOneEvent: a restart a device logs (IOS's
// %SYS-5-RESTART, Junos's SNMPD_TRAP_COLD_START), which tells no boot
// time, and the same restart by a coldStart trap and the next poll (boot
// times from sysUpTime) are one device_rebooted, whichever comes first: the
// line comes from just before to rebootLogDelay after the boot. A line
// later than that, or a second line long after the first, is another
// restart; with de-duplication off, each is passed on.
func TestRestartLoggedAndTrappedIsOneEvent(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	type report struct {
		topic string
		at    time.Duration // after t0, when weir takes it
		up    uint32        // sysUpTime (hundredths) then; 0 for a log line
	}
	logged := func(at time.Duration) report { return report{telemetry.TopicRawSyslog, at, 0} }
	trap := func(at time.Duration, up uint32) report { return report{telemetry.TopicRawTraps, at, up} }
	poll := func(at time.Duration, up uint32) report { return report{telemetry.TopicRawSNMP, at, up} }
	for _, c := range []struct {
		name    string
		dedup   time.Duration
		reports []report
		want    int
	}{
		{"line, then trap and poll", DefaultDedupWindow, []report{logged(50 * time.Second), trap(55*time.Second, 2000), poll(90*time.Second, 5500)}, 1},
		{"trap, then line", DefaultDedupWindow, []report{trap(20*time.Second, 500), logged(2 * time.Minute)}, 1},
		{"poll, then the line it came after", DefaultDedupWindow, []report{poll(4*time.Minute, 24000), logged(40 * time.Second)}, 1},
		{"line long after the boot", DefaultDedupWindow, []report{trap(20*time.Second, 500), logged(20 * time.Minute)}, 2},
		{"two lines, two restarts", DefaultDedupWindow, []report{logged(time.Minute), logged(40 * time.Minute)}, 2},
		{"one line twice", DefaultDedupWindow, []report{logged(time.Minute), logged(time.Minute + time.Second)}, 1},
		{"line, then a second restart's trap", DefaultDedupWindow, []report{logged(time.Minute), trap(10*time.Minute, 3000), logged(10*time.Minute + 30*time.Second)}, 2},
		{"de-duplication off", 0, []report{logged(50 * time.Second), trap(55*time.Second, 2000)}, 2},
	} {
		d := newDetector(c.dedup, DefaultFlapThreshold, DefaultFlapWindow)
		d.logsFrom(telemetry.TopicRawSyslog)
		n := 0
		for i, r := range c.reports {
			at := t0.Add(r.at)
			ev := telemetry.Event{Type: typeRebooted, Device: "edge1", Time: at, Cause: telemetry.Cause{Topic: r.topic, Offset: int64(i)}}
			if r.up != 0 {
				ev.Time = bootTime(at, r.up)
			}
			n += len(d.observe(ev, at))
		}
		if n != c.want {
			t.Errorf("%s: %d device_rebooted, want %d", c.name, n, c.want)
		}
	}
}

// TestRestartLinesClassified: what a device logs once it is up after a
// boot raises device_rebooted; a reload or reboot asked for (before it), a
// shutdown, one process or daemon restarted, another VDC started and a
// supervisor becoming active (a switchover too) do not.
func TestRestartLinesClassified(t *testing.T) {
	c := NewClassifier()
	for _, tc := range []struct{ msg, event string }{
		{"%SYS-5-RESTART: System restarted --", "device_rebooted"},
		{"snmpd[359]: SNMPD_TRAP_COLD_START: trap_generate_cold: SNMP trap: cold start", "device_rebooted"},
		{"%SYS-5-RELOAD: Reload requested by admin on console. Reload Reason: Reload Command.", ""},
		{"snmpd[359]: SNMPD_TRAP_WARM_START: trap_generate_warm: SNMP trap: warm start", ""},
		// EOS: the boot's line, and ProcMgr's and the launcher's for one
		// agent (ipspace/blog's netlab syslog post, napalm-logs).
		{"%SYS-5-SYSTEM_INITIALIZED: System is initialized", "device_rebooted"},
		{"%PROCMGR-6-WORKER_WARMSTART: ProcMgr worker warm start. (PID=632)", ""},
		{"%PROCMGR-7-WORKER_WARMSTART_DONE: ProcMgr worker warm start done. (PID=547)", ""},
		{"%PROCMGR-6-PROCESS_RESTART: Restarting 'Bgp' immediately (it had PID=32058)", ""},
		{"%LAUNCHER-6-PROCESS_STOP: Configuring process 'SystemInitMonitor' to stop in role 'ActiveSupervisor'", ""},
		// NX-OS: the default VDC up; the reload asked for; another VDC
		// (our words, in the form elastic/beats parses); a supervisor
		// active (an MDS's line in a public syslog parser's tests).
		{"%VDC_MGR-2-VDC_ONLINE: vdc 1 has come online", "device_rebooted"},
		{"%PLATFORM-2-PFM_SYSTEM_RESET: Manual system restart from Command Line Interface", ""},
		{"%VDC_MGR-2-VDC_ONLINE: vdc 2 has come online", ""},
		{"%MODULE-5-ACTIVE_SUP_OK: Supervisor 1 is active", ""},
		// RouterOS.
		{"system,info router rebooted", "device_rebooted"},
		{"system,error,critical router rebooted without proper shutdown, probably power outage", "device_rebooted"},
		// FortiOS: 32009 a start; 32545 a scheduled reboot starting,
		// 32200 a shutdown, 20204 a daemon started (the log message
		// reference's IDs; the lines ours).
		{`date=2026-11-29 time=14:02:41 devname="fw1" logid="0100032009" type="event" subtype="system" level="information" vd="root" logdesc="FortiGate started" msg="FortiGate started"`, "device_rebooted"},
		{`date=2026-11-29 time=03:00:00 devname="fw1" logid="0100032545" type="event" subtype="system" level="critical" vd="root" logdesc="Scheduled daily reboot started" msg="Scheduled daily reboot started"`, ""},
		{`date=2026-11-29 time=14:00:02 devname="fw1" logid="0100032200" type="event" subtype="system" level="critical" vd="root" logdesc="Device shutdown" user="admin" ui="ssh(10.0.0.5)" action="shutdown"`, ""},
		{`date=2026-11-29 time=14:03:10 devname="fw1" logid="0100020204" type="event" subtype="system" level="information" vd="root" logdesc="Daemon started" daemon="snmpd" pid=1234 action="start"`, ""},
	} {
		if info := c.Classify(&telemetry.Log{Message: tc.msg}); info.Event != tc.event {
			t.Errorf("%q: event %q (rule %s), want %q", tc.msg, info.Event, info.Rule, tc.event)
		}
	}
}

// TestSyslogWorkerTellsItsTopicHoldsLogs: a syslog worker (one with a
// classifier) has its detector time the device_rebooted of its input
// topic, renamed or not, as log lines.
func TestSyslogWorkerTellsItsTopicHoldsLogs(t *testing.T) {
	w := NewWorker(nil, nil, NewClassifier(), WithInputTopic("site1.syslog"))
	if len(w.det.logTopics) != 1 || w.det.logTopics[0] != "site1.syslog" {
		t.Fatalf("log topics %q, want [site1.syslog]", w.det.logTopics)
	}
}

// TestRestartLoggedLateWithAShortFlapWindow: the line may come up to
// rebootLogDelay after the boot a trap gave, however short the flap window
// (and so the time the detector keeps states): settle must not forget the
// trap's boot time before then, live or after a restart that warmed it up.
// With flap.window 2m and no SNMP polls it did, and a restart a device
// logged 4 minutes into its boot was two device_rebooted.
func TestRestartLoggedLateWithAShortFlapWindow(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	const window = 2 * time.Minute
	trap := telemetry.Event{Type: typeRebooted, Device: "edge1", Time: t0, Cause: telemetry.Cause{Topic: telemetry.TopicRawTraps}}
	line := telemetry.Event{Type: typeRebooted, Device: "edge1", Time: t0, Cause: telemetry.Cause{Topic: telemetry.TopicRawSyslog}}
	trapAt, lineAt := t0.Add(20*time.Second), t0.Add(4*time.Minute+20*time.Second)
	settle := func(d *detector) {
		for at := trapAt; at.Before(lineAt); at = at.Add(time.Second) {
			d.settleClears(at)
		}
	}
	for _, c := range []struct {
		name    string
		restart bool
		end     time.Time // the last record the warm-up reads
	}{
		{"live", false, time.Time{}},
		{"restart after the trap", true, trapAt},
		// Other traps came after the coldStart: the flap window before
		// the last of them starts after it.
		{"restart, later traps", true, trapAt.Add(3 * time.Minute)},
	} {
		d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, window)
		d.logsFrom(telemetry.TopicRawSyslog)
		n := 1 // the trap's, published before a restart
		if c.restart {
			if w := eventWarmup(DefaultWarmup, d); c.end.Sub(trapAt) > w {
				t.Fatalf("%s: the warm-up reads %v back, not to the trap", c.name, w)
			}
			rememberAt(d, trap, trapAt, c.end.Add(-window))
		} else {
			n = len(d.observe(trap, trapAt))
		}
		settle(d)
		line.Cause.Offset++
		n += len(d.observe(line, lineAt))
		if n != 1 {
			t.Errorf("%s: %d device_rebooted, want 1", c.name, n)
		}
	}
}

// TestRestartLoggedKnownPastMaxObjects: past maxObjects the detector
// still judges the events of the objects it knows. A device whose restart
// it knows from a log line (kept under loggedReboot) is one: its coldStart
// trap, and the line sent again, were passed on as an unknown object's,
// a second and third device_rebooted.
func TestRestartLoggedKnownPastMaxObjects(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	d.logsFrom(telemetry.TopicRawSyslog)
	d.maxObjects = 2
	line := telemetry.Event{Type: typeRebooted, Device: "edge1", Time: t0, Cause: telemetry.Cause{Topic: telemetry.TopicRawSyslog, Offset: 1}}
	n := len(d.observe(line, t0.Add(50*time.Second)))
	// Other devices' links fill the detector.
	for i := range 2 {
		d.observe(telemetry.Event{Type: "interface_down", Device: fmt.Sprint("core", i), Object: "Gi0/1", Time: t0,
			Cause: telemetry.Cause{Topic: telemetry.TopicRawSyslog, Offset: int64(2 + i)}}, t0.Add(51*time.Second))
	}
	if d.tracked("edge9", "", typeRebooted) {
		t.Fatal("the detector is not full")
	}
	line.Cause.Offset = 10
	n += len(d.observe(line, t0.Add(52*time.Second)))
	trap := telemetry.Event{Type: typeRebooted, Device: "edge1", Time: t0.Add(35 * time.Second), Cause: telemetry.Cause{Topic: telemetry.TopicRawTraps}}
	n += len(d.observe(trap, t0.Add(55*time.Second)))
	if n != 1 {
		t.Errorf("%d device_rebooted, want 1", n)
	}
}
