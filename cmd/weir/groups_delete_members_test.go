package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestGroupsDeleteMessages: deleting a group that has members fails, as
// Kafka's tool does, with what to do (stop them first) rather than only
// the broker's NON_EMPTY_GROUP "The group is not empty.", which a user
// reads as "it has committed offsets", the very thing to delete; the
// errors read as one sentence (not "NON_EMPTY_GROUP: The group is not
// empty.: it has members"), and a group that is not there says "no such
// group", as describe does, not GROUP_ID_NOT_FOUND's "The group id does
// not exist.".
func TestGroupsDeleteMessages(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	groupMember(ctx, t, c.ListenAddrs(), "g", "t")
	for group, want := range map[string]string{
		"g":      "delete group g: NON_EMPTY_GROUP: it has members; stop them first",
		"nosuch": "delete group nosuch: no such group",
	} {
		var stdout, stderr bytes.Buffer
		err := dispatch(ctx, []string{"groups", "delete", group, "--brokers", c.ListenAddrs()[0]}, strings.NewReader(""), &stdout, &stderr)
		if err == nil || exitCode(err) != 1 || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("groups delete %s: %v (exit %d); want %q...", group, err, exitCode(err), want)
		}
	}
}
