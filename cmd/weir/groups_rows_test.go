package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestGroupRowsUnread: a group whose lag could not be read (its describe
// or offset fetch failed, or the broker's answer left it out) has no
// figures: -o json said members 0 and lag 0, which a script adding the
// lags takes for real, and the error of a group left out was "<nil>"
// (in the table too).
func TestGroupRowsUnread(t *testing.T) {
	listed := kadm.ListedGroups{
		"ok":      {Group: "ok", State: "Stable"},
		"failed":  {Group: "failed", State: "Stable"},
		"missing": {Group: "missing", State: "Empty"},
	}
	lags := kadm.DescribedGroupLags{
		"ok":     {Group: "ok", State: "Stable"},
		"failed": {Group: "failed", State: "Stable", FetchErr: errors.New("NOT_COORDINATOR")},
	}
	rows := groupRows([]string{"failed", "missing", "ok"}, listed, lags)
	b, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, r := range got[:2] {
		if r["members"] != nil || r["lag"] != nil {
			t.Errorf("%s: members %v, lag %v; want null for a group not read", r["group"], r["members"], r["lag"])
		}
		if e, _ := r["error"].(string); e == "" || strings.Contains(e, "nil") {
			t.Errorf("%s: error %q, want why it was not read", r["group"], e)
		}
	}
	if r := got[2]; r["members"] != 0.0 || r["lag"] != 0.0 || r["error"] != nil {
		t.Errorf("ok: %v, want members 0, lag 0, no error", r)
	}
}

// TestGroupsTableUnreadWithoutReason: a group whose lag read failed with
// an error that has no text has no figures either: the table says it
// could not be read rather than dereferencing the figures it does not
// have (a panic), and the JSON's error is not empty beside null figures.
func TestGroupsTableUnreadWithoutReason(t *testing.T) {
	listed := kadm.ListedGroups{"mute": {Group: "mute", State: "Stable"}, "ok": {Group: "ok", State: "Stable"}}
	lags := kadm.DescribedGroupLags{
		"mute": {Group: "mute", State: "Stable", FetchErr: errors.New("")},
		"ok":   {Group: "ok", State: "Stable"},
	}
	rows := groupRows([]string{"mute", "ok"}, listed, lags)
	if rows[0].Members != nil || rows[0].Error == "" {
		t.Errorf("mute: members %v, error %q; want none and why", rows[0].Members, rows[0].Error)
	}
	var b strings.Builder
	if err := writeGroupsTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "mute") || !strings.Contains(lines[1], "error:") ||
		!strings.HasSuffix(strings.Join(strings.Fields(lines[2]), " "), "ok Stable 0 0") {
		t.Errorf("table:\n%s", b.String())
	}
}
