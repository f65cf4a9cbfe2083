// Command weir-sim is a lab in one command: simulated devices on loopback,
// so weir can be tried and measured without a single real router.
//
//	weir-sim syslog --target 127.0.0.1:5514 --protocol tcp --count 1000000 --verify-brokers 127.0.0.1:9092
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

const usage = `weir-sim: simulated network devices for weir

Usage:
  weir-sim syslog [--target ADDR] [--protocol udp|tcp] [--framing octet|newline]
                  [--rate N] [--count N] [--connections N] [--devices N]
                  [--verify-brokers ADDR [--topic T] [--latency]
                   [--verify-tls-ca F] [--verify-sasl-mechanism M --verify-sasl-username U]]
  weir-sim snmp   [--agents N] [--interfaces M] [--host H] [--base-port P] [--community C]
                  [--slow K --slow-delay D] [--dead K] [--reboot K --reboot-every D]
                  [--v3-user U --v3-auth-protocol P --v3-auth-password S --v3-priv-protocol P --v3-priv-password S]
                  [--write-config FILE --interval D]
  weir-sim traps  [--target ADDR] [--community C] [--rate N] [--count N] [--senders N] [--inform]
  weir-sim gnmi   [--targets N] [--interfaces M] [--neighbors K] [--host H] [--base-port P] [--toggle-every D] [--flap-every D]
                  [--clock-offset D] [--username U --password S] [--tls-cert F --tls-key F [--tls-client-ca F]]
                  [--write-config FILE --sample-interval D --encoding E]
  weir-sim lab    [--write-config FILE] [--data-dir D] [--syslog-target ADDR] [--syslog-every D]
                  [--interval D] [--snmp-base-port P] [--gnmi-base-port P]
                  (a lab in one command: SNMP agents leaf1-3, gNMI targets spine1-2 and their
                  syslog, and the weir config that collects them)
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "syslog":
		err = syslogCmd(ctx, os.Args[2:])
	case "snmp":
		err = snmpCmd(ctx, os.Args[2:])
	case "traps":
		err = trapsCmd(ctx, os.Args[2:])
	case "gnmi":
		err = gnmiCmd(ctx, os.Args[2:])
	case "lab":
		err = labCmd(ctx, os.Args[2:])
	case "-h", "--help", "help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "weir-sim:", err)
		os.Exit(1)
	}
}

// writeConfig writes a config snippet whole or not at all (a temporary
// file renamed into place), written once the simulators listen: a script
// that waits for the file (until [ -s FILE ]) never reads half of it, and
// the targets it names answer.
func writeConfig(path, text string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
