package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weirnet/weir/collectors/gnmi/sim"
	"github.com/weirnet/weir/internal/tlsconf"
)

// gnmiCmd runs N simulated gNMI targets on consecutive loopback ports until
// interrupted, and can write the matching gnmi: section for weir.
func gnmiCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("weir-sim gnmi", flag.ContinueOnError)
	targets := fs.Int("targets", 1, "number of targets")
	interfaces := fs.Int("interfaces", 8, "interfaces per target (10 counters each)")
	neighbors := fs.Int("neighbors", 4, "BGP neighbors per target")
	host := fs.String("host", "127.0.0.1", "address to bind")
	basePort := fs.Int("base-port", 50051, "TCP port of the first target; target i listens on base-port+i")
	toggle := fs.Duration("toggle-every", 30*time.Second, "flip a BGP neighbor's session state this often (0: never)")
	flap := fs.Duration("flap-every", 0, "flip an interface's oper-status this often, in turn (0: never; all stay UP)")
	clock := fs.Duration("clock-offset", 0, "stamp notifications this far from the host's clock (-30s: a target whose clock is 30 s behind)")
	user := fs.String("username", "", "require this username (gRPC metadata)")
	pass := fs.String("password", "", "require this password")
	certFile := fs.String("tls-cert", "", "serve TLS with this certificate (PEM)")
	keyFile := fs.String("tls-key", "", "the certificate's key (PEM)")
	clientCA := fs.String("tls-client-ca", "", "require client certificates signed by this CA (PEM)")
	configOut := fs.String("write-config", "", "write a weir config snippet (gnmi: targets) for the targets to this file")
	sample := fs.Duration("sample-interval", 10*time.Second, "counters sample interval written by --write-config")
	encoding := fs.String("encoding", "proto", "encoding written by --write-config: json, json_ietf or proto")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *targets < 1 || *basePort < 1 || *basePort+*targets > 65536 {
		return fmt.Errorf("targets and base-port must give ports within 1..65535")
	}
	// The simulator takes 0 for its defaults: refused here, or the banner
	// would say 0 while 8 interfaces and 4 neighbors are served.
	if *interfaces < 1 {
		return fmt.Errorf("interfaces must be at least 1, not %d", *interfaces)
	}
	if *neighbors < 1 {
		return fmt.Errorf("neighbors must be at least 1, not %d", *neighbors)
	}
	var tlsCfg *tls.Config
	if *certFile != "" {
		var err error
		if tlsCfg, err = tlsconf.Server(*certFile, *keyFile, *clientCA); err != nil {
			return fmt.Errorf("gnmi: %w", err)
		}
	}
	tog := *toggle
	if tog == 0 {
		tog = -1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, *targets)
	for i := 0; i < *targets; i++ {
		addr := net.JoinHostPort(*host, strconv.Itoa(*basePort+i))
		lis, err := net.Listen("tcp", addr)
		if err != nil {
			cancel()
			wg.Wait()
			return fmt.Errorf("gnmi: target %d: %w", i, err)
		}
		s := sim.New(sim.Config{Interfaces: *interfaces, Neighbors: *neighbors, ToggleEvery: tog, FlapEvery: *flap, ClockOffset: *clock, Username: *user, Password: *pass, TLS: tlsCfg})
		wg.Go(func() {
			if err := s.Serve(ctx, lis); err != nil {
				errs <- fmt.Errorf("gnmi: target %s: %w", addr, err)
				cancel()
			}
		})
	}
	fmt.Fprintf(os.Stderr, "weir-sim: %d gNMI targets on %s:%d-%d (%d interfaces, %d neighbors each)\n",
		*targets, *host, *basePort, *basePort+*targets-1, *interfaces, *neighbors)
	if *configOut != "" {
		if err := writeConfig(*configOut, gnmiConfig(*targets, *host, *basePort, *sample, *encoding, *user, *pass, tlsCfg != nil)); err != nil {
			cancel()
			wg.Wait()
			return err
		}
		fmt.Fprintf(os.Stderr, "weir-sim: wrote %s\n", *configOut)
	}
	<-ctx.Done()
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// onChangeSubscriptions are the subscriptions to the simulator's state
// leaves, which weir turns into interface and BGP events, and to its
// interfaces' speed, which gives their utilisation.
const onChangeSubscriptions = "    oper: {path: /interfaces/interface/state/oper-status, mode: stream, stream_mode: on_change, heartbeat_interval: 60s}\n" +
	"    bgp: {path: /network-instances/network-instance/protocols/protocol/bgp/neighbors/neighbor/state/session-state, mode: stream, stream_mode: on_change, heartbeat_interval: 60s}\n" +
	"    speed: {path: /interfaces/interface/ethernet/state/port-speed, mode: stream, stream_mode: on_change, heartbeat_interval: 60s}\n"

func gnmiConfig(n int, host string, basePort int, sample time.Duration, encoding, user, pass string, withTLS bool) string {
	var b strings.Builder
	b.WriteString("gnmi:\n  subscriptions:\n")
	fmt.Fprintf(&b, "    counters: {path: /interfaces/interface/state/counters, mode: stream, stream_mode: sample, sample_interval: %s}\n", sample)
	b.WriteString(onChangeSubscriptions)
	b.WriteString("  targets:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "    - {name: sim-gnmi%d, address: %q, encoding: %s", i, net.JoinHostPort(host, strconv.Itoa(basePort+i)), encoding)
		if withTLS {
			b.WriteString(", tls: {insecure_skip_verify: true}")
		} else {
			b.WriteString(", insecure: true")
		}
		if user != "" {
			fmt.Fprintf(&b, ", username: %q, password: %q", user, pass)
		}
		b.WriteString(", subscriptions: [counters, oper, bgp, speed]}\n")
	}
	return b.String()
}
