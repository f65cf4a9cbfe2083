package httpx

import (
	"bytes"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/sinks"
)

// TestBadRequestAboutTheEndpoint: a 400 that is a web server's answer to
// the request, not the API's to its records (plain HTTP to an HTTPS
// port), is retried as the endpoint's problem: dead-lettering would send
// the whole backlog to dead.letter, record by record, while url is
// wrong. The API's own 400 (JSON, text naming the bad line, a Flask
// receiver's HTML page) still refuses the records.
func TestBadRequestAboutTheEndpoint(t *testing.T) {
	post := func(t *testing.T, url string) error {
		t.Helper()
		resp, err := http.Post(url, "text/plain", bytes.NewReader([]byte("m v=1\n")))
		if err != nil {
			t.Fatal(err)
		}
		return Classify("influxdb sink", resp, time.Now())
	}
	retryable := func(t *testing.T, err error) {
		t.Helper()
		var re *sinks.RetryableError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "url") {
			t.Errorf("%v: want it retried, saying to check url", err)
		}
	}

	// Go's net/http TLS server (InfluxDB 2, VictoriaMetrics) sent http://.
	tls := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	tls.Config.ErrorLog = log.New(io.Discard, "", 0) // it logs the mistake too
	tls.StartTLS()
	defer tls.Close()
	retryable(t, post(t, strings.Replace(tls.URL, "https://", "http://", 1)))

	// nginx's page for the same mistake.
	nginx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte("<html>\r\n<head><title>400 The plain HTTP request was sent to HTTPS port</title></head>\r\n</html>\r\n"))
	}))
	defer nginx.Close()
	retryable(t, post(t, nginx.URL))

	// The API's answers about the records.
	for _, c := range []struct{ contentType, body string }{
		{"application/json", `{"error":"unable to parse 'm v=': missing field value"}`},
		{"text/plain; charset=utf-8", "out of order sample"},
		{"text/html; charset=utf-8", "<!doctype html>\n<title>400 Bad Request</title>\n<p>The browser (or proxy) sent a request that this server could not understand.</p>"},
	} {
		api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", c.contentType)
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(c.body))
		}))
		var rej *sinks.RejectedError
		if err := post(t, api.URL); !errors.As(err, &rej) {
			t.Errorf("%s 400 %q: %v, want the records refused", c.contentType, c.body, err)
		}
		api.Close()
	}
}
