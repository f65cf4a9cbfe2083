package configs

import (
	"strings"
	"testing"
)

// TestSinkHeadersHTTPRefuses: a header Go's HTTP client would refuse at
// every request (a name with a space, a value with a newline, as a YAML
// block scalar or an environment file leaves at a token's end) is refused
// by the check, naming the header but not its value (a token); and the
// headers the client drops without a word (Host, Content-Length, ...) are
// refused with what to do instead. Before, weir check said ok and the
// sink retried every record for ever.
func TestSinkHeadersHTTPRefuses(t *testing.T) {
	for _, c := range []struct{ headers, want string }{
		{`{"Bad Header": x}`, `header name "Bad Header"`},
		{`{X-Token: "s3cret\n"}`, `header "X-Token": its value`},
		{`{Host: hooks.example.net}`, `header "Host"`},
		{`{content-length: "10"}`, `header "content-length"`},
		// Sent one or the other, as the map's order fell.
		{`{authorization: "Bearer a", Authorization: "Bearer b"}`, `"Authorization" and "authorization" are one header`},
	} {
		for _, typ := range []string{"webhook", "influxdb", "prometheus_remote_write"} {
			db := ""
			if typ == "influxdb" {
				db = "database: d, "
			}
			y := "sinks:\n  - {type: " + typ + ", name: s, " + db + "url: \"http://127.0.0.1:39399/x\", topics: [events], headers: " + c.headers + "}\n"
			_, err := Parse([]byte(y))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s %s: err = %v, want it to contain %s", typ, c.headers, err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("%s: the error shows the header's value: %v", typ, err)
			}
		}
	}
	ok := "sinks:\n  - {type: webhook, name: s, url: \"http://127.0.0.1:39399/x\", topics: [events], headers: {Authorization: \"Bearer a b\", X-Tab: \"a\tb\", Content-Type: text/plain}}\n"
	if _, err := Parse([]byte(ok)); err != nil {
		t.Errorf("valid headers refused: %v", err)
	}
}
