package webhook

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"
)

// TestRememberedAlertsResentAtStart: the firing alerts a restart loads
// are re-sent as Run starts, not one re-send interval later. An alert's
// endsAt is four intervals after its last post, so a weir stopped for
// more than about three had them resolved in Alertmanager, then firing
// again at the first re-send: a resolved and a firing notification for
// each link still down.
func TestRememberedAlertsResentAtStart(t *testing.T) {
	am := &amModel{last: map[string]bool{}}
	srv := httptest.NewServer(am)
	defer srv.Close()
	hs := srv.URL
	dir := t.TempDir()
	first := amSink(t, hs, dir)
	amWrite(t, first, amEv("interface_down", "Ethernet7", "et7", time.Minute))
	if !first.saveActive() {
		t.Fatal("not saved")
	}
	// Alertmanager forgets it (its endsAt came while weir was stopped).
	am.mu.Lock()
	clear(am.last)
	bodies := am.bodies
	am.mu.Unlock()

	second := amSink(t, hs, dir) // its re-send interval: an hour
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { second.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	labels := map[string]string{"alertname": "interface_down", "device": "edge1", "object": "Ethernet7", "site": "ams1"}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if firing, _ := am.firing(labels); firing {
			break
		}
		if time.Now().After(deadline) {
			am.mu.Lock()
			defer am.mu.Unlock()
			t.Fatalf("the remembered alert not re-sent at the start (%d posts since)", am.bodies-bodies)
		}
	}
}
