package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// TestClientSASLNeedsPassword: --sasl-mechanism and --sasl-username without
// a password ($WEIR_SASL_PASSWORD unset, no --sasl-password) is a usage
// error naming where the password goes, as broker.kafka.sasl's password is
// required in the config. It used to reach the broker and fail there with
// franz-go's "PLAIN user and pass must be non-empty" (or, with SCRAM, the
// broker's refusal of the credentials), neither of which says that the
// password was simply not given.
func TestClientSASLNeedsPassword(t *testing.T) {
	t.Setenv("WEIR_SASL_PASSWORD", "")
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-512"} {
		var stdout, stderr bytes.Buffer
		err := dispatch(context.Background(), []string{"topics", "list", "--brokers", "127.0.0.1:1",
			"--sasl-mechanism", mech, "--sasl-username", "ops"}, strings.NewReader(""), &stdout, &stderr)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), "WEIR_SASL_PASSWORD") {
			t.Errorf("%s without a password: %v; want a usage error (exit 2) naming $WEIR_SASL_PASSWORD", mech, err)
		}
	}
	// An unknown mechanism is named first: the password would not help.
	var stdout, stderr bytes.Buffer
	err := dispatch(context.Background(), []string{"topics", "list", "--brokers", "127.0.0.1:1",
		"--sasl-mechanism", "SCRAM-SHA-1", "--sasl-username", "ops"}, strings.NewReader(""), &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `not "SCRAM-SHA-1"`) || exitCode(err) != 2 {
		t.Errorf("SCRAM-SHA-1 without a password: %v; want the mechanism refused (exit 2)", err)
	}
}
