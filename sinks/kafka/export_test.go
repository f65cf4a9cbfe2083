package kafka

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/sinks"
)

// AddClientOpts gives the client of d, and every client that replaces it,
// opts too (tests: a hook that delays franz-go where a loaded host may).
func AddClientOpts(d sinks.Destination, opts ...kgo.Opt) error {
	s := d.(*Sink)
	s.opts = append(s.opts, opts...)
	old := s.client
	if err := s.newClient(); err != nil {
		return err
	}
	old.Close()
	return nil
}
