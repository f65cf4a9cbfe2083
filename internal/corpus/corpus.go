// Package corpus reads the shared test data (../shared/corpus beside the
// checkout) for tests and load tools, so each does not parse it its own
// way.
package corpus

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// SyslogLine is one line of corpus/syslog/messages.jsonl: a message as a
// device family sends it, and what it should yield.
type SyslogLine struct {
	Raw       string `json:"raw"`
	Format    string `json:"format"`
	Vendor    string `json:"vendor"`
	Host      string `json:"host"`
	Severity  *int   `json:"severity"`
	Event     string `json:"event"`
	Interface string `json:"interface"`
	Neighbor  string `json:"neighbor"`
	User      string `json:"user"`
}

// Dir is the shared corpus folder: shared/corpus beside the checkout.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "corpus")
}

// Syslog reads every line of the syslog corpus.
func Syslog() ([]SyslogLine, error) {
	path := filepath.Join(Dir(), "syslog", "messages.jsonl")
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w (the shared test data goes in shared/ beside the checkout, as in CI)", err)
	}
	defer f.Close()
	var out []SyslogLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		var l SyslogLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("corpus: %s:%d: %w", path, n, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("corpus: %s: %w", path, err)
	}
	return out, nil
}
