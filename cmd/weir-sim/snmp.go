package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/weirnet/weir/collectors/snmp/sim"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/snmpv3"
)

// snmpCmd runs N simulated SNMP agents on consecutive loopback ports until
// interrupted, and can write the matching snmp: section for weir.
func snmpCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("weir-sim snmp", flag.ContinueOnError)
	agents := fs.Int("agents", 1, "number of agents")
	interfaces := fs.Int("interfaces", 48, "interfaces per agent (IF-MIB ifTable and ifXTable rows)")
	host := fs.String("host", "127.0.0.1", "address to bind")
	basePort := fs.Int("base-port", 16100, "UDP port of the first agent; agent i listens on base-port+i")
	community := fs.String("community", "public", "v1/v2c community")
	slow := fs.Int("slow", 0, "how many agents (the last ones) answer slowly")
	slowDelay := fs.Duration("slow-delay", 200*time.Millisecond, "delay of each answer of a slow agent")
	dead := fs.Int("dead", 0, "how many agents (before the slow ones) never answer")
	reboot := fs.Int("reboot", 0, "how many agents (the first ones) reboot every --reboot-every, resetting sysUpTime and counters")
	rebootEvery := fs.Duration("reboot-every", 5*time.Minute, "reboot period of rebooting agents")
	configOut := fs.String("write-config", "", "write a weir config snippet (snmp: targets) for the agents to this file")
	interval := fs.Duration("interval", 60*time.Second, "poll interval written by --write-config")
	var v3 configs.SNMPv3
	fs.StringVar(&v3.User, "v3-user", "", "also accept SNMPv3 from this USM user (and write version 3 targets)")
	fs.StringVar(&v3.AuthProtocol, "v3-auth-protocol", "SHA256", "MD5, SHA, SHA224, SHA256, SHA384, SHA512")
	fs.StringVar(&v3.AuthPassword, "v3-auth-password", "", "auth password (8+ characters); empty: noAuthNoPriv")
	fs.StringVar(&v3.PrivProtocol, "v3-priv-protocol", "AES", "DES, AES, AES192, AES256, AES192C, AES256C")
	fs.StringVar(&v3.PrivPassword, "v3-priv-password", "", "priv password (8+ characters); empty: authNoPriv")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var usm *gosnmp.UsmSecurityParameters
	if v3.User != "" {
		switch {
		case v3.PrivPassword != "":
			v3.SecurityLevel = "authPriv"
		case v3.AuthPassword != "":
			v3.SecurityLevel = "authNoPriv"
		default:
			v3.SecurityLevel = "noAuthNoPriv"
		}
		var err error
		if usm, _, err = snmpv3.USM(v3); err != nil {
			return err
		}
	}
	if *agents < 1 || *basePort < 1 || *basePort+*agents > 65536 {
		return fmt.Errorf("agents and base-port must give ports within 1..65535")
	}
	var started []*sim.Agent
	for i := 0; i < *agents; i++ {
		opts := sim.Options{
			Name:       fmt.Sprintf("sim%d", i),
			Seed:       uint64(i),
			Interfaces: *interfaces,
			Community:  *community,
			V3:         usm,
		}
		switch {
		case i >= *agents-*slow:
			opts.Delay = *slowDelay
		case i >= *agents-*slow-*dead:
			opts.Dead = true
		case i < *reboot:
			opts.RebootEvery = *rebootEvery
		}
		a, err := sim.Listen(net.JoinHostPort(*host, fmt.Sprint(*basePort+i)), opts)
		if err != nil {
			return err
		}
		started = append(started, a)
	}
	if *configOut != "" {
		if err := writeSNMPConfig(*configOut, *host, *basePort, *agents, *community, *interval, v3); err != nil {
			return err
		}
	}
	versions := "v1/v2c"
	if usm != nil {
		versions = "v1/v2c/v3 user " + v3.User
	}
	fmt.Fprintf(os.Stderr, "weir-sim: %d SNMP agents (%s, community %q) with %d interfaces on udp %s:%d-%d (%d slow, %d dead, %d rebooting)\n",
		*agents, versions, *community, *interfaces, *host, *basePort, *basePort+*agents-1, *slow, *dead, *reboot)
	var wg sync.WaitGroup
	for _, a := range started {
		wg.Go(func() { _ = a.Serve(ctx) })
	}
	wg.Wait()
	var total int64
	for _, a := range started {
		total += a.Requests()
	}
	fmt.Fprintf(os.Stderr, "weir-sim: answered %d requests\n", total)
	return nil
}

// pollTimeout is the timeout written with interval: 2s, or less for a
// short interval, as weir takes only a timeout x (retries 1 + 1) that
// fits the interval.
func pollTimeout(interval time.Duration) time.Duration {
	return min(2*time.Second, interval/2)
}

// minPollInterval is the least interval a written config may have: its
// timeout (half of it) must reach weir's floor, configs.MinSNMPTimeout.
const minPollInterval = 2 * configs.MinSNMPTimeout

// checkPollInterval refuses an interval whose written config weir would
// refuse.
func checkPollInterval(interval time.Duration) error {
	if interval < minPollInterval {
		return fmt.Errorf("--interval must be at least %v, not %v: the written timeout is half of it, and weir takes no SNMP timeout below %v", minPollInterval, interval, configs.MinSNMPTimeout)
	}
	return nil
}

func writeSNMPConfig(path, host string, basePort, agents int, community string, interval time.Duration, v3 configs.SNMPv3) error {
	if err := checkPollInterval(interval); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Generated by weir-sim snmp: %d simulated agents.\nsnmp:\n", agents)
	fmt.Fprintf(&b, "  defaults: {version: 2c, community: %q, interval: %s, timeout: %s, retries: 1, profiles: [system, if-mib]}\n", community, interval, pollTimeout(interval))
	if v3.User != "" {
		b.Reset()
		fmt.Fprintf(&b, "# Generated by weir-sim snmp: %d simulated agents (SNMPv3).\nsnmp:\n", agents)
		fmt.Fprintf(&b, "  defaults:\n    version: 3\n    interval: %s\n    timeout: %s\n    retries: 1\n    profiles: [system, if-mib]\n", interval, pollTimeout(interval))
		fmt.Fprintf(&b, "    v3: {user: %q, security_level: %s", v3.User, v3.SecurityLevel)
		if v3.AuthPassword != "" {
			fmt.Fprintf(&b, ", auth_protocol: %s, auth_password: %q", v3.AuthProtocol, v3.AuthPassword)
		}
		if v3.PrivPassword != "" {
			fmt.Fprintf(&b, ", priv_protocol: %s, priv_password: %q", v3.PrivProtocol, v3.PrivPassword)
		}
		b.WriteString("}\n")
	}
	b.WriteString("  targets:\n")
	for i := 0; i < agents; i++ {
		fmt.Fprintf(&b, "    - {name: sim%d, address: \"%s:%d\"}\n", i, host, basePort+i)
	}
	return writeConfig(path, b.String())
}

// trapsCmd sends SNMPv2c traps (linkDown/linkUp with IF-MIB varbinds) at a
// rate, from several sockets as several devices would.
func trapsCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("weir-sim traps", flag.ContinueOnError)
	target := fs.String("target", "127.0.0.1:5162", "trap receiver")
	community := fs.String("community", "public", "community")
	rate := fs.Int("rate", 1000, "traps per second (0: as fast as possible)")
	count := fs.Int("count", 10000, "traps to send")
	senders := fs.Int("senders", 4, "sending sockets")
	inform := fs.Bool("inform", false, "send informs and wait for each acknowledgement")
	if err := fs.Parse(args); err != nil {
		return err
	}
	host, portStr, err := net.SplitHostPort(*target)
	if err != nil {
		return err
	}
	var port uint16
	if _, err := fmt.Sscan(portStr, &port); err != nil {
		return fmt.Errorf("bad port in %s", *target)
	}
	var sent, failed atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	per := *count / *senders
	for s := 0; s < *senders; s++ {
		n := per
		if s == 0 {
			n += *count % *senders
		}
		wg.Go(func() {
			g := &gosnmp.GoSNMP{Target: host, Port: port, Version: gosnmp.Version2c, Community: *community,
				Timeout: 2 * time.Second, Retries: 2}
			if err := g.Connect(); err != nil {
				failed.Add(int64(n))
				return
			}
			defer g.Conn.Close()
			var interval time.Duration
			if *rate > 0 {
				interval = time.Second * time.Duration(*senders) / time.Duration(*rate)
			}
			next := time.Now()
			for i := 0; i < n && ctx.Err() == nil; i++ {
				idx := i%48 + 1
				trapOID := ".1.3.6.1.6.3.1.1.5.3" // linkDown
				status := 2
				if i%2 == 1 {
					trapOID, status = ".1.3.6.1.6.3.1.1.5.4", 1
				}
				_, err := g.SendTrap(gosnmp.SnmpTrap{IsInform: *inform, Variables: []gosnmp.SnmpPDU{
					{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(time.Since(start) / (10 * time.Millisecond))},
					{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: trapOID},
					{Name: fmt.Sprintf(".1.3.6.1.2.1.2.2.1.1.%d", idx), Type: gosnmp.Integer, Value: idx},
					{Name: fmt.Sprintf(".1.3.6.1.2.1.2.2.1.7.%d", idx), Type: gosnmp.Integer, Value: 1},
					{Name: fmt.Sprintf(".1.3.6.1.2.1.2.2.1.8.%d", idx), Type: gosnmp.Integer, Value: status},
				}})
				if err != nil {
					failed.Add(1)
				} else {
					sent.Add(1)
				}
				if interval > 0 {
					next = next.Add(interval)
					if d := time.Until(next); d > 0 {
						time.Sleep(d)
					}
				}
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	fmt.Printf("sent %d traps in %v (%.0f/s), %d failed\n", sent.Load(), el.Round(time.Millisecond), float64(sent.Load())/el.Seconds(), failed.Load())
	return nil
}
