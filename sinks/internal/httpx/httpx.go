// Package httpx is what the HTTP sinks share: classifying a response or a
// transport failure into the sinks package's retryable and rejected errors.
package httpx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/weirnet/weir/internal/tlsconf"
	"github.com/weirnet/weir/sinks"
)

// Classify turns a response into nil (2xx), a *sinks.RejectedError (400,
// 413, 422: the records are refused) or a *sinks.RetryableError (any other
// status, honouring Retry-After, and a 400 that is about the request, not
// the records: see aboutTheRequest). It drains and closes the body.
func Classify(what string, resp *http.Response, now time.Time) error {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // let the connection be reused
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	msg := strings.TrimSpace(string(body))
	if loc := resp.Header.Get("Location"); loc != "" && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		// A redirect not followed (see NewClient): say where to, in
		// full (a Location is often a path alone, no URL to set).
		if req := resp.Request; req != nil && req.URL != nil {
			if u, err := req.URL.Parse(loc); err == nil {
				loc = Where(u, req.URL)
			} else {
				loc = "a Location that does not parse"
			}
		} else {
			loc = Peer(loc)
		}
		msg = strings.TrimSpace("redirected to " + loc + " (set url to it) " + msg)
	}
	if req := resp.Request; (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) &&
		req != nil && req.Response != nil && req.Header.Get("Authorization") == "" && req.Response.Request.Header.Get("Authorization") != "" {
		// A 307/308 followed to another host, which Go's client sends
		// no Authorization header: a right token reads as a wrong one.
		msg = strings.TrimSpace(fmt.Sprintf("after a redirect to %s, where the Authorization header is not sent (set url to it) %s",
			Where(req.URL, req.Response.Request.URL), msg))
	}
	peer := "unknown peer"
	if req := resp.Request; req != nil && req.URL != nil {
		peer = Peer(req.URL.String()) // the one that answered, after redirects
	}
	err := fmt.Errorf("%s: %s: HTTP %d: %s", what, peer, resp.StatusCode, msg)
	switch {
	case resp.StatusCode == http.StatusBadRequest && aboutTheRequest(msg):
		// A web server's answer, not the API's: dead-lettering would
		// send the whole backlog to dead.letter, record by record.
		return &sinks.RetryableError{Reason: "http_400",
			Err: fmt.Errorf("%w (a web server's answer to the request, not the API's to the records: is url right, https:// for an HTTPS port?)", err)}
	case resp.StatusCode == http.StatusBadRequest, resp.StatusCode == http.StatusRequestEntityTooLarge, resp.StatusCode == http.StatusUnprocessableEntity:
		// The records themselves are refused: dead-letter them.
		return &sinks.RejectedError{Reason: "http_" + strconv.Itoa(resp.StatusCode), Err: err}
	}
	// Everything else is about the endpoint, not the records: 429 and
	// 5xx, but also 401/403 (a wrong token), 404 (a bucket not created
	// yet), 3xx and 408. Retrying stalls the sink, which lag and
	// weir_sink_retries_total show, instead of dead-lettering the whole
	// backlog while the destination is misconfigured.
	return &sinks.RetryableError{Err: err, After: RetryAfter(resp.Header.Get("Retry-After"), now),
		Reason: "http_" + strconv.Itoa(resp.StatusCode)}
}

// aboutTheRequest reports whether a 400 is a web server's refusal of the
// request rather than the API's of the records in it: plain HTTP sent to
// an HTTPS port, as Go's net/http (InfluxDB 2, VictoriaMetrics) and nginx
// word it. Not any HTML 400: a webhook receiver's framework (Flask)
// refuses a payload with an HTML page too, and that record is to be
// dead-lettered, not retried for ever.
func aboutTheRequest(msg string) bool {
	return strings.Contains(msg, "HTTP request to an HTTPS server") ||
		strings.Contains(msg, "plain HTTP request was sent to HTTPS port")
}

// RetryAfter parses a Retry-After header: seconds or an HTTP date. Capped
// at 5 minutes so a confused server cannot park a sink for a day.
func RetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.Atoi(v); err == nil {
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), 5*time.Minute)
}

// Transport wraps a transport failure (refused, reset, timeout) as
// retryable: the destination may be back soon. The URL net/http names is
// cut to its peer (see Peer).
func Transport(what string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = &url.Error{Op: ue.Op, URL: Peer(ue.URL), Err: ue.Err}
	}
	return &sinks.RetryableError{Err: fmt.Errorf("%s: %w", what, err)}
}

// Peer is the scheme and host of a URL, what an error names it by: a chat
// hook's path holds its secret (https://hooks.slack.com/services/T/B/<token>),
// which a log line must not show, nor a query (?api_key=) or user info.
func Peer(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(URL not shown)"
	}
	return u.Scheme + "://" + u.Host
}

// Where names the target of a redirect of a request to from, as an error
// may: Peer's scheme and host, then the path, and the query's keys. Parts
// that are from's are said to be the same, not shown, and query values
// never are: they hold a URL's secrets (a chat hook's token path,
// ?api_key=), and a redirect (http:// to https://) usually keeps them.
// User info is left out, as in Peer.
func Where(to, from *url.URL) string {
	var b strings.Builder
	b.WriteString(Peer(to.String()))
	switch p := to.EscapedPath(); {
	case p == from.EscapedPath() && strings.Trim(p, "/") != "":
		b.WriteString("/<the same path>")
	default:
		b.WriteString(p)
	}
	switch {
	case to.RawQuery == "":
	case to.RawQuery == from.RawQuery:
		b.WriteString("?<the same query>")
	default:
		for i, kv := range strings.Split(to.RawQuery, "&") {
			if i == 0 {
				b.WriteByte('?')
			} else {
				b.WriteByte('&')
			}
			if k, _, ok := strings.Cut(kv, "="); ok {
				b.WriteString(k + "=…")
			} else {
				b.WriteString("…") // ?<token> alone
			}
		}
	}
	return b.String()
}

// Body is a request body over a buffer its sink reuses for the next
// request. net/http may go on reading a body after Do returns (a server
// that answers before reading it all, with a 401 or a 413, is the common
// case), so the buffer may be written again only once the transport has
// closed every reader of it it was given: Released tells.
type Body struct {
	buf  []byte
	open atomic.Int32
}

// NewRequest makes a POST of buf to url, with its length and GetBody set
// (for redirects and HTTP/2 retries), and the Body to ask before reusing
// buf. Its User-Agent is "weir", for the receiver's access log; a sink's
// configured headers, set after, may replace it.
func NewRequest(ctx context.Context, url string, buf []byte) (*http.Request, *Body, error) {
	body := &Body{buf: buf}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body.reader())
	if err != nil {
		return nil, nil, err
	}
	req.ContentLength = int64(len(buf))
	req.GetBody = func() (io.ReadCloser, error) { return body.reader(), nil }
	req.Header.Set("User-Agent", "weir")
	return req, body, nil
}

func (b *Body) reader() io.ReadCloser {
	b.open.Add(1)
	return &bodyReader{Reader: bytes.NewReader(b.buf), body: b}
}

// ReleaseWait is how long a sink waits for the transport to let go of a
// body before it takes a new buffer instead (it is usually at once, or
// about a millisecond after an early answer).
const ReleaseWait = 50 * time.Millisecond

// Released reports whether every reader of the body is closed, waiting up
// to wait for the transport to close them; false: the caller must not
// reuse the buffer (and should take a new one).
func (b *Body) Released(wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for b.open.Load() != 0 {
		if time.Now().After(deadline) {
			return false
		}
		// Usually a matter of the transport's goroutine running once.
		time.Sleep(100 * time.Microsecond)
	}
	return true
}

type bodyReader struct {
	*bytes.Reader
	body   *Body
	closed atomic.Bool
}

func (r *bodyReader) Close() error {
	if r.closed.CompareAndSwap(false, true) {
		r.body.open.Add(-1)
	}
	return nil
}

// keepMethod follows a redirect only when it keeps the POST and its body
// (307, 308). A 301, 302 or 303 would have net/http re-send the request as
// a GET without the records, and the GET's 200 would count them delivered:
// such a redirect is returned as it is, a 3xx, which Classify retries as an
// endpoint to fix.
func keepMethod(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if req.Method != via[0].Method {
		return http.ErrUseLastResponse
	}
	return nil
}

// NewClient is an HTTP client bounded by timeout, with the TLS settings t
// gives (CA, client certificate, server name) for https:// URLs, else the
// system's roots. Each client has a transport of its own: a sink's Close
// closes its idle connections, and with Go's shared default transport it
// closed every other sink's too.
func NewClient(timeout time.Duration, t tlsconf.Client) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if !t.IsZero() {
		tc, err := t.Config()
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig = tc
	}
	return &http.Client{Timeout: timeout, CheckRedirect: keepMethod, Transport: tr}, nil
}
