// Package snmptest runs Net-SNMP's snmpd and command-line tools for tests
// of the SNMP poller and trap receiver, and captures what a collector
// publishes. Debian ships no MIB files, so everything here uses numeric
// OIDs (-On) with MIBS empty, and each snmpd reads only the test's config
// (-C -c) and keeps its state in the test's temp dir.
package snmptest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// V3 credentials of the user every Agent has.
const (
	Community   = "public"
	V3User      = "weir"
	V3AuthProto = "SHA-256"
	V3AuthPass  = "authpass123"
	V3PrivProto = "AES"
	V3PrivPass  = "privpass123"
	// CommunityIfOnly reads IF-MIB's ifTable and ifXTable only, as an
	// agent whose view leaves the system group out.
	CommunityIfOnly = "ifonly"
)

// Require skips the test when the Net-SNMP programs are not installed.
func Require(t testing.TB, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s not installed (apt-get install snmpd snmp): %v", p, err)
		}
	}
}

// FreeUDPPort returns a UDP port on 127.0.0.1 that was free a moment ago.
func FreeUDPPort(t testing.TB) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// Agent is a running snmpd.
type Agent struct {
	Port int
	Addr string // 127.0.0.1:PORT
	Dir  string
}

// StartSNMPD starts snmpd on a free loopback port with a v2c community
// ("public"), one that reads IF-MIB alone (CommunityIfOnly) and a v3
// authPriv user (weir, SHA-256/AES), and stops it when the test ends.
func StartSNMPD(t testing.TB) *Agent {
	t.Helper()
	Require(t, "snmpd", "snmpget")
	dir := t.TempDir()
	conf := filepath.Join(dir, "snmpd.conf")
	body := fmt.Sprintf(`rocommunity %s 127.0.0.1
view ifonly included .1.3.6.1.2.1.2
view ifonly included .1.3.6.1.2.1.31
rocommunity %s 127.0.0.1 -V ifonly
createUser %s %s %s %s %s
rouser %s authpriv
`, Community, CommunityIfOnly, V3User, V3AuthProto, V3AuthPass, V3PrivProto, V3PrivPass, V3User)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port := FreeUDPPort(t)
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, "snmpd", "-f", "-Lo", "-C", "-c", conf, "udp:"+addr)
		cmd.Env = Env(dir)
		out, _ := os.Create(filepath.Join(dir, "snmpd.log"))
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatalf("start snmpd: %v", err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		a := &Agent{Port: port, Addr: addr, Dir: dir}
		if err := a.waitReady(done); err != nil {
			cancel()
			<-done
			out.Close()
			log, _ := os.ReadFile(filepath.Join(dir, "snmpd.log"))
			lastErr = fmt.Errorf("%v; log:\n%s", err, log)
			continue // the port was taken in between: try another
		}
		t.Cleanup(func() {
			cancel()
			<-done
			out.Close()
		})
		return a
	}
	t.Fatalf("snmpd did not start: %v", lastErr)
	return nil
}

func (a *Agent) waitReady(done <-chan struct{}) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return errors.New("snmpd exited")
		default:
		}
		cmd := exec.Command("snmpget", "-v2c", "-c", Community, "-On", "-t", "0.3", "-r", "0", a.Addr, "1.3.6.1.2.1.1.5.0")
		cmd.Env = Env(a.Dir)
		if err := cmd.Run(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("snmpd did not answer within 10s")
}

// Env is the environment for Net-SNMP programs: no MIBs, state in dir.
func Env(dir string) []string {
	env := []string{"MIBS=", "MIBDIRS=", "SNMP_PERSISTENT_DIR=" + dir, "SNMPCONFPATH=" + dir}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return env
}

// Run runs a Net-SNMP tool with Env(dir) and returns its output.
func Run(t testing.TB, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = Env(dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Varbind is one line of snmpwalk -On -Ot -Oe output.
type Varbind struct {
	OID   string // without the leading dot
	Type  string // STRING, INTEGER, Counter32, Counter64, Gauge32, Timeticks, OID, Hex-STRING, ...
	Value string // unquoted
}

// BulkWalk runs snmpbulkwalk against the agent and parses its output.
func (a *Agent) BulkWalk(t testing.TB, maxRep int, oid string) []Varbind {
	t.Helper()
	out := Run(t, a.Dir, "snmpbulkwalk", "-v2c", "-c", Community, "-On", "-Ot", "-Oe", "-OU",
		"-Cr"+strconv.Itoa(maxRep), a.Addr, oid)
	return ParseWalk(out)
}

// ParseWalk parses ".1.3.6... = TYPE: value" lines; continuation lines of
// multi-line strings are appended.
func ParseWalk(out string) []Varbind {
	var vbs []Varbind
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		oid, rest, ok := strings.Cut(line, " = ")
		if ok && strings.HasPrefix(rest, "No more variables left") {
			continue // the walk reached the end of the agent's view
		}
		if !ok || !strings.HasPrefix(oid, ".") {
			if len(vbs) > 0 {
				vbs[len(vbs)-1].Value += "\n" + line
			}
			continue
		}
		// "STRING: x", or a bare value where -Ot prints Timeticks as
		// a number and where an empty string is "".
		typ, val, ok := strings.Cut(rest, ": ")
		if !ok || strings.HasPrefix(rest, `"`) {
			typ, val = "", rest
		}
		if strings.HasPrefix(val, `"`) && strings.HasSuffix(val, `"`) && len(val) >= 2 {
			val = val[1 : len(val)-1]
		}
		vbs = append(vbs, Varbind{OID: strings.TrimPrefix(oid, "."), Type: typ, Value: strings.TrimSpace(val)})
	}
	return vbs
}

// Capture is a broker.Broker that keeps what is produced, for tests.
type Capture struct {
	mu     sync.Mutex
	recs   []broker.Record
	notify chan struct{}
}

// NewCapture returns an empty Capture.
func NewCapture() *Capture { return &Capture{notify: make(chan struct{}, 1)} }

// Produce keeps copies of the records.
func (c *Capture) Produce(_ context.Context, topic string, recs []broker.Record) error {
	c.mu.Lock()
	for _, r := range recs {
		r.Topic = topic
		r.Key = append([]byte(nil), r.Key...)
		r.Value = append([]byte(nil), r.Value...)
		c.recs = append(c.recs, r)
	}
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
	return nil
}

// Records returns what was produced so far.
func (c *Capture) Records() []broker.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]broker.Record(nil), c.recs...)
}

// WaitFor waits until cond holds over the records or the timeout passes.
func (c *Capture) WaitFor(timeout time.Duration, cond func([]broker.Record) bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if cond(c.Records()) {
			return true
		}
		select {
		case <-c.notify:
		case <-deadline.C:
			return cond(c.Records())
		}
	}
}

var errUnsupported = errors.New("snmptest.Capture supports Produce only")

// ProducePartition is not supported.
func (c *Capture) ProducePartition(context.Context, string, int32, []broker.Record) error {
	return errUnsupported
}

// Fetch is not supported.
func (c *Capture) Fetch(context.Context, string, int32, int64, broker.FetchOptions, *broker.FetchResult) error {
	return errUnsupported
}

// Consume is not supported.
func (c *Capture) Consume(context.Context, string, []string, ...broker.ConsumerOption) (broker.Consumer, error) {
	return nil, errUnsupported
}

// CreateTopic is not supported.
func (c *Capture) CreateTopic(context.Context, string, broker.TopicConfig) error {
	return errUnsupported
}

// DeleteTopic is not supported.
func (c *Capture) DeleteTopic(context.Context, string) error { return errUnsupported }

// DescribeTopics is not supported.
func (c *Capture) DescribeTopics(context.Context, ...string) ([]broker.TopicInfo, error) {
	return nil, errUnsupported
}

// Close does nothing.
func (c *Capture) Close() error { return nil }

// Record dumps the agent's OIDs from start up to stop (exclusive) with
// snmpsim's snmprec, in the .snmprec format snmpsimd serves.
func (a *Agent) Record(t testing.TB, start, stop string) []byte {
	t.Helper()
	Require(t, "snmprec")
	out := filepath.Join(t.TempDir(), "rec.snmprec")
	Run(t, a.Dir, "snmprec", "--agent-udpv4-endpoint="+a.Addr, "--community="+Community,
		"--start-object="+start, "--stop-object="+stop, "--output-file="+out)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// StartSnmpsim runs snmpsim's snmpsimd on a free loopback port serving one
// simulated device per entry of devices (community name -> .snmprec data)
// and returns its address. snmpsimd refuses to run as root, so as root it
// drops to nobody, which must be able to read the data and write the index.
func StartSnmpsim(t testing.TB, devices map[string][]byte) string {
	t.Helper()
	Require(t, "snmpsimd", "snmpget")
	base := t.TempDir()
	data, cache := filepath.Join(base, "data"), filepath.Join(base, "cache")
	for _, d := range []string{data, cache} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(d, 0o777) // past the umask: nobody writes the index
	}
	// t.TempDir makes the test's directory and this one 0700; nobody
	// needs to pass through both.
	_ = os.Chmod(base, 0o755)
	_ = os.Chmod(filepath.Dir(base), 0o755)
	for name, rec := range devices {
		if err := os.WriteFile(filepath.Join(data, name+".snmprec"), rec, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	port := FreeUDPPort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	args := []string{"--data-dir=" + data, "--cache-dir=" + cache, "--agent-udpv4-endpoint=" + addr}
	if os.Geteuid() == 0 {
		args = append(args, "--process-user=nobody", "--process-group=nogroup")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "snmpsimd", args...)
	log, _ := os.Create(filepath.Join(base, "snmpsimd.log"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start snmpsimd: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { cancel(); <-done; log.Close() })
	var first string
	for name := range devices {
		first = name
		break
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			out, _ := os.ReadFile(filepath.Join(base, "snmpsimd.log"))
			t.Fatalf("snmpsimd exited:\n%s", out)
		default:
		}
		probe := exec.Command("snmpget", "-v2c", "-c", first, "-On", "-t", "0.5", "-r", "0", addr, "1.3.6.1.2.1.1.5.0")
		probe.Env = Env(base)
		if probe.Run() == nil {
			return addr
		}
		time.Sleep(200 * time.Millisecond)
	}
	out, _ := os.ReadFile(filepath.Join(base, "snmpsimd.log"))
	t.Fatalf("snmpsimd did not answer within 20s:\n%s", out)
	return ""
}

// Snmprec is one line of a .snmprec file: OID|TAG|VALUE, where TAG is the
// BER type (2 INTEGER, 4 OCTET STRING, 6 OID, 64 IpAddress, 65 Counter32,
// 66 Gauge32, 67 TimeTicks, 70 Counter64) with "x" when VALUE is hex.
type Snmprec struct {
	OID, Tag, Value string
}

// ParseSnmprec parses .snmprec data.
func ParseSnmprec(data []byte) []Snmprec {
	var out []Snmprec
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(line, "|", 3)
		if len(parts) != 3 {
			continue
		}
		out = append(out, Snmprec{OID: parts[0], Tag: parts[1], Value: parts[2]})
	}
	return out
}
