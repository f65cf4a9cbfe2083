// Package httpx is what the HTTP sinks share: classifying a response or a
// transport failure into the sinks package's retryable and rejected errors.
package httpx

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/weirnet/weir/sinks"
)

// Classify turns a response into nil (2xx), a *sinks.RejectedError (400,
// 413, 422: the records are refused) or a *sinks.RetryableError (any other
// status, honouring Retry-After). It drains and closes the body.
func Classify(what string, resp *http.Response, now time.Time) error {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // let the connection be reused
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	msg := strings.TrimSpace(string(body))
	err := fmt.Errorf("%s: HTTP %d: %s", what, resp.StatusCode, msg)
	switch resp.StatusCode {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		// The records themselves are refused: dead-letter them.
		return &sinks.RejectedError{Reason: "http_" + strconv.Itoa(resp.StatusCode), Err: err}
	}
	// Everything else is about the endpoint, not the records: 429 and
	// 5xx, but also 401/403 (a wrong token), 404 (a bucket not created
	// yet), 3xx and 408. Retrying stalls the sink, which lag and
	// weir_sink_retries_total show, instead of dead-lettering the whole
	// backlog while the destination is misconfigured.
	return &sinks.RetryableError{Err: err, After: RetryAfter(resp.Header.Get("Retry-After"), now)}
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
// retryable: the destination may be back soon.
func Transport(what string, err error) error {
	return &sinks.RetryableError{Err: fmt.Errorf("%s: %w", what, err)}
}
