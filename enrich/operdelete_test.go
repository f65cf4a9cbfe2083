package enrich

import (
	"fmt"
	"strings"
	"testing"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
)

// TestGNMIOperStatusDeleteDropsOperUp: a gNMI delete of an interface's
// oper-status leaf (what a resubscription's snapshot without the port
// gives, leaf by leaf) takes the oper_up that enrich derived from it with
// it, in its row and in the interface's "interface" record, at once
// rather than when stale: a removed port must not show up for minutes.
// A sibling interface's oper_up stays. The same when the state came in
// one JSON object of /interfaces (field state/oper-status of the
// interface's row).
func TestGNMIOperStatusDeleteDropsOperUp(t *testing.T) {
	t.Run("leaves", func(t *testing.T) { testGNMIOperStatusDeleteDropsOperUp(t, false) })
	t.Run("json", func(t *testing.T) { testGNMIOperStatusDeleteDropsOperUp(t, true) })
}

func testGNMIOperStatusDeleteDropsOperUp(t *testing.T, asJSON bool) {
	testOperUpDropped(t, asJSON, "Ethernet1's oper-status", func(c *gnmiChain) *gpb.Notification {
		return &gpb.Notification{Prefix: c.path("/interfaces/interface[name=Ethernet1]/state"), Delete: []*gpb.Path{c.path("oper-status")}}
	})
}

// TestGNMIStateContainerDeleteDropsOperUp: a gNMI delete of an interface's
// state container, or of its list entry, takes the oper_up enrich derived
// from the oper-status under it with it, as the leaf's delete does: when
// the state came in one JSON object of /interfaces, oper_up is a field of
// the interface's row, above the deleted container, whose own fields go
// (state/oper-status) but whose oper_up must go too. A sibling's stays.
func TestGNMIStateContainerDeleteDropsOperUp(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		for _, del := range []string{"/interfaces/interface[name=Ethernet1]/state", "/interfaces/interface[name=Ethernet1]"} {
			t.Run(fmt.Sprintf("json=%v %s", asJSON, del), func(t *testing.T) { testGNMIStateContainerDelete(t, asJSON, del) })
		}
	}
}

func testGNMIStateContainerDelete(t *testing.T, asJSON bool, del string) {
	testOperUpDropped(t, asJSON, del, func(c *gnmiChain) *gpb.Notification {
		return &gpb.Notification{Delete: []*gpb.Path{c.path(del)}}
	})
}

// testOperUpDropped sends Ethernet1's and Ethernet2's oper-status (as
// leaves, or in one JSON object of /interfaces), then the delete that
// deleted makes (of what), and checks that Ethernet1's oper_up series
// (its row's and its interface record's) went and Ethernet2's stayed.
func testOperUpDropped(t *testing.T, asJSON bool, what string, deleted func(*gnmiChain) *gpb.Notification) {
	c := newGNMIChain(t)
	state := func(name string) *gpb.Notification {
		if asJSON {
			js := fmt.Sprintf(`{"openconfig-interfaces:interface":[{"name":%q,"state":{"oper-status":"UP"}}]}`, name)
			return &gpb.Notification{Update: []*gpb.Update{{Path: c.path("/interfaces"),
				Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(js)}}}}}
		}
		return &gpb.Notification{Prefix: c.path("/interfaces/interface[name=" + name + "]/state"), Update: []*gpb.Update{
			{Path: c.path("oper-status"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: "UP"}}}}}
	}
	operUp := func(iface string) []string {
		var names []string
		for _, n := range c.served(iface) {
			if strings.HasSuffix(n, "oper_up") {
				names = append(names, n)
			}
		}
		return names
	}
	c.step(0, state("Ethernet1"))
	c.step(0, state("Ethernet2"))
	if got := operUp("Ethernet1"); len(got) < 2 {
		t.Fatalf("before the delete: oper_up series of Ethernet1 %q, want its row's and its interface record's", got)
	}
	c.step(10, deleted(c))
	if got := operUp("Ethernet1"); len(got) > 0 {
		t.Errorf("after the delete of %s: %q still served", what, got)
	}
	if got := operUp("Ethernet2"); len(got) < 2 {
		t.Errorf("after the delete of %s: Ethernet2's oper_up %q, want both kept", what, got)
	}
}
