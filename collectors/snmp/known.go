package snmp

import (
	"context"
	"slices"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/runset"
	"github.com/weirnet/weir/internal/wholefile"
)

// knownTargets is what Config.StateFile holds: the targets of the last
// list the poller took (no credentials), so that the next start finds
// those taken out of the config while weir was stopped and says they
// were removed, as a reload does (see publishRemoved).
type knownTargets struct {
	V       int           `json:"v"`
	Targets []knownTarget `json:"targets"`
}

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
	var k knownTargets
	err := wholefile.ReadJSON(path, &k)
	return k.Targets, err
}

// saveKnown replaces the state file with the poller's latest targets and
// those removed whose removal was not published (unsaid: told again at the
// next start, unless listed again). The targets are read under knownMu, so
// of a start's save and a reload's the last written has the latest list.
func (p *Poller) saveKnown() {
	path := p.cfg.StateFile
	if path == "" {
		return
	}
	p.knownMu.Lock()
	defer p.knownMu.Unlock()
	p.mu.Lock()
	targets := p.targets
	p.mu.Unlock()
	p.knownSaved = p.knownGen
	k := knownTargets{V: 1, Targets: make([]knownTarget, 0, len(targets)+len(p.unsaid))}
	for _, t := range targets {
		k.Targets = append(k.Targets, t.known())
	}
	if len(p.unsaid) > 0 {
		names := targetNames(targets)
		p.unsaid = slices.DeleteFunc(p.unsaid, func(u knownTarget) bool { return names[u.Name] })
		k.Targets = append(k.Targets, p.unsaid...)
	}
	err := wholefile.ReplaceJSON(path, &k)
	switch {
	case err != nil && !p.knownFailed:
		p.cfg.Logger.Warn("snmp: cannot keep the list of targets, trying again every "+wholefile.RetryEvery.String()+"; until then one taken out of the config while weir is stopped will not be told removed at the next start",
			"file", path, "err", err)
	case err == nil && p.knownFailed:
		p.cfg.Logger.Info("snmp: the list of targets is kept again", "file", path)
	}
	p.knownFailed = err != nil
}

// removedWhileStopped says removed (publishRemoved) each target of the
// state file that the config no longer lists, then saves the list: an
// outage the target was in before the stop ends, as when a reload
// removes it. In a cluster every process that polled it says so; the
// second says nothing new. The removals are published at once, under one
// bound (publishGrace), however many there are: the targets start after
// them. One whose record the broker did not take by then stays in the
// file, for the next start (as sayRemoved keeps it).
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
	p.knownMu.Lock()
	for i, k := range removed {
		if failed[i] {
			p.unsaid = append(p.unsaid, k)
		}
	}
	p.knownMu.Unlock()
	p.saveKnown()
}

// sayRemoved publishes t's removal (publishRemoved); one not published is
// kept as unsaid, for the state file's next save (the caller's:
// saveKnownSince(gen)) to keep it for the next start. It reports whether
// it kept t.
func (p *Poller) sayRemoved(ctx context.Context, t *target) (gen uint64, kept bool) {
	if t.publishRemoved(ctx) {
		return 0, false
	}
	p.knownMu.Lock()
	defer p.knownMu.Unlock()
	p.unsaid = append(p.unsaid, t.known())
	p.knownGen++
	return p.knownGen, true
}

// saveKnownSince saves the state file unless a save since has listed the
// removal counted gen (knownGen) in unsaid. The removals of a reload that
// the broker did not take fail together, at their one deadline, and each
// would save the file (synced) in turn: they wait their turn on knownSave
// instead, keeping their removals in unsaid meanwhile, and the next save
// lists them all.
func (p *Poller) saveKnownSince(gen uint64) {
	p.knownSave.Lock()
	defer p.knownSave.Unlock()
	p.knownMu.Lock()
	saved := p.knownSaved >= gen
	p.knownMu.Unlock()
	if !saved {
		p.saveKnown()
	}
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
