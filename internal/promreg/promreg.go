// Package promreg registers Prometheus collectors so that a part rebuilt
// on a config reload reuses the collectors its predecessor registered,
// instead of failing on the duplicate.
package promreg

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c on reg and returns it, or returns the collector
// already registered under the same description. Any other error is kept
// in *errp (the first one wins), so a constructor can register several
// collectors and check once.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C, errp *error) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		if *errp == nil {
			*errp = err
		}
	}
	return c
}
