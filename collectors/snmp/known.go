package snmp

import (
	"context"
	"slices"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/runset"
	"github.com/weirnet/weir/internal/targetfile"
)

// knownTarget is a target as Config.StateFile keeps it (no credentials):
// the file lists the targets of the last list the poller took, so that
// the next start finds those taken out of the config while weir was
// stopped and says they were removed, as a reload does (see
// publishRemoved).
type knownTarget struct {
	Name string            `json:"name"`
	Host string            `json:"host"`
	Tags map[string]string `json:"tags,omitempty"`
}

// readKnown reads the state file; none (a first start, or no file kept)
// is an empty list.
func readKnown(path string) ([]knownTarget, error) {
	if path == "" {
		return nil, nil
	}
	return targetfile.Read[knownTarget](path)
}

// knownTargets are the poller's latest targets as the state file keeps
// them.
func (p *Poller) knownTargets() []knownTarget {
	p.mu.Lock()
	targets := p.targets
	p.mu.Unlock()
	out := make([]knownTarget, len(targets))
	for i, t := range targets {
		out[i] = t.known()
	}
	return out
}

// removedWhileStopped says removed (publishRemoved) each target of the
// state file that the config no longer lists, then saves the list: an
// outage the target was in before the stop ends, as when a reload
// removes it. In a cluster every process that polled it says so; the
// second says nothing new. The removals are published at once, under one
// bound (publishGrace), however many there are: the targets start after
// them. One whose record the broker did not take by then stays in the
// file, for the next start (as a reload's Gone keeps it).
func (p *Poller) removedWhileStopped(ctx context.Context, targets []*target) {
	known, err := readKnown(p.cfg.StateFile)
	if err != nil {
		p.cfg.Logger.Warn("snmp: cannot read the list of targets polled before; none taken out of the config since is told removed",
			"err", err)
	}
	names := targetNames(targets)
	rctx, cancel := context.WithTimeout(ctx, publishGrace)
	defer cancel()
	removed := slices.DeleteFunc(slices.Clone(known), func(k knownTarget) bool { return names[k.Name] })
	failed := make([]bool, len(removed))
	runset.AtOnce(len(removed), func(i int) { // as a reload's
		k := removed[i]
		t := &target{cfg: configs.SNMPTarget{Name: k.Name, Host: k.Host, Tags: k.Tags}, p: p, log: p.cfg.Logger.With("target", k.Name)}
		failed[i] = !t.publishRemoved(rctx)
	})
	var unsaid []knownTarget
	for i, k := range removed {
		if failed[i] {
			unsaid = append(unsaid, k)
		}
	}
	p.known.Unsaid(unsaid...)
	p.known.Save()
}

// known is what the state file keeps of t.
func (t *target) known() knownTarget {
	return knownTarget{Name: t.cfg.Name, Host: t.cfg.Host, Tags: t.cfg.Tags}
}

func targetNames(targets []*target) map[string]bool {
	names := make(map[string]bool, len(targets))
	for _, t := range targets {
		names[t.cfg.Name] = true
	}
	return names
}
