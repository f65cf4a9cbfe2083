package promreg

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestRegisterReusesExisting(t *testing.T) {
	reg := prometheus.NewRegistry()
	opts := prometheus.CounterOpts{Name: "x_total", Help: "x"}
	var err error
	first := Register(reg, prometheus.NewCounter(opts), &err)
	second := Register(reg, prometheus.NewCounter(opts), &err)
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Fatal("second registration did not return the first collector")
	}
	// Same name, other help: a real conflict, kept in err.
	Register(reg, prometheus.NewCounter(prometheus.CounterOpts{Name: "x_total", Help: "y"}), &err)
	if err == nil {
		t.Fatal("conflicting registration: no error")
	}
}
