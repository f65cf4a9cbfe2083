package snmp

import (
	"context"
	"os"
	"os/exec"
	"sort"
	"testing"
	"time"

	"github.com/weirnet/weir/collectors/snmp/sim"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestSNMPFigures measures the README's SNMP figures. It runs only with
// WEIR_BENCH=1:
//
//	WEIR_BENCH=1 go test -run TestSNMPFigures -v ./collectors/snmp
func TestSNMPFigures(t *testing.T) {
	if os.Getenv("WEIR_BENCH") == "" {
		t.Skip("set WEIR_BENCH=1 to measure")
	}
	t.Run("20000 interfaces", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		a, err := sim.Listen("127.0.0.1:0", sim.Options{Name: "big", Interfaces: 20000, Community: "public"})
		if err != nil {
			t.Fatal(err)
		}
		go a.Serve(ctx)
		capture := snmptest.NewCapture()
		tc := testTarget("big", a.Addr().String(), func(tc *configs.SNMPTarget) {
			tc.Interval, tc.Timeout, tc.MaxRepetitions = 60*time.Second, 5*time.Second, 50
		})
		p, err := New(Config{Targets: []configs.SNMPTarget{tc}, Profiles: loadProfiles(t), Broker: capture})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := p.PollOnce(ctx, "big"); err != nil {
			t.Fatal(err)
		}
		el := time.Since(start)
		rows := 0
		var varbinds any
		for _, m := range decode(t, capture.Records()) {
			switch m.Measurement {
			case "snmp_interface":
				rows++
			case "snmp_status":
				varbinds = m.Fields["varbinds"]
			}
		}
		if rows != 20000 {
			t.Fatalf("%d interface rows", rows)
		}
		t.Logf("FIGURE one agent, 20,000 interfaces, system+if-mib, max-repetitions 50: walked in %v (%v varbinds, %d requests)", el.Round(time.Millisecond), varbinds, a.Requests())
	})
	t.Run("walk vs snmpbulkwalk", func(t *testing.T) {
		agent := snmptest.StartSNMPD(t)
		const root = "1.3.6.1.2.1"
		const reps = 25
		tc := testTarget("snmpd", agent.Addr, func(tc *configs.SNMPTarget) { tc.MaxRepetitions = reps })
		p, err := New(Config{Targets: []configs.SNMPTarget{tc}, Profiles: loadProfiles(t), Broker: snmptest.NewCapture()})
		if err != nil {
			t.Fatal(err)
		}
		tg := p.targets[0]
		s, err := tg.session()
		if err != nil {
			t.Fatal(err)
		}
		defer tg.close()
		median := func(f func() int) (time.Duration, int) {
			var ds []time.Duration
			n := 0
			for i := 0; i < 7; i++ {
				start := time.Now()
				n = f()
				ds = append(ds, time.Since(start))
			}
			sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
			return ds[len(ds)/2], n
		}
		weir, n1 := median(func() int {
			var res poll
			pdus, err := tg.walk(s, root, &res)
			if err != nil {
				t.Fatal(err)
			}
			return len(pdus)
		})
		net, n2 := median(func() int {
			cmd := exec.Command("snmpbulkwalk", "-v2c", "-c", snmptest.Community, "-On", "-Cr25", agent.Addr, root)
			cmd.Env = snmptest.Env(agent.Dir)
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			return len(snmptest.ParseWalk(string(out)))
		})
		t.Logf("FIGURE walk of %s on snmpd (max-repetitions %d): weir %v (%d varbinds), snmpbulkwalk %v (%d varbinds), weir/snmpbulkwalk time %.2f",
			root, reps, weir.Round(time.Microsecond), n1, net.Round(time.Microsecond), n2, float64(weir)/float64(net))
	})
}
