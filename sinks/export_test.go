package sinks

import "time"

// SetPollRetryWait sets the wait after a failed poll for a test, and
// returns what restores it.
func SetPollRetryWait(d time.Duration) func() {
	old := pollRetryWait
	pollRetryWait = d
	return func() { pollRetryWait = old }
}
