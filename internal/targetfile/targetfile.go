// Package targetfile keeps the list of targets a collector was last given
// in a state file, so that its next start finds the targets taken out of
// the config while weir was stopped and can say they were removed, as a
// reload does. The SNMP poller and the gNMI collector each keep one.
//
// Besides the targets it is given, the file lists the removed targets
// whose removal could not be published (a broker that is down): they are
// "unsaid", and stay in the file until a start tells them.
package targetfile

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/weirnet/weir/internal/wholefile"
)

// file is what the state file holds.
type file[T any] struct {
	V       int `json:"v"`
	Targets []T `json:"targets"`
}

// Read reads the state file at path; none (a first start) is an empty
// list.
func Read[T any](path string) ([]T, error) {
	var f file[T]
	err := wholefile.ReadJSON(path, &f)
	return f.Targets, err
}

// Write replaces the state file at path with targets, making its
// directory first.
func Write[T any](path string, targets []T) error {
	return wholefile.ReplaceJSON(path, &file[T]{V: 1, Targets: targets})
}

// Keeper saves a collector's targets, and its unsaid removals, to a state
// file. Its methods are safe for concurrent use; the zero Keeper is not
// usable, see New.
type Keeper[T any] struct {
	path string
	name func(T) string
	list func() []T
	log  *slog.Logger
	who  string

	mu     sync.Mutex // held while the file is written, and over the fields below
	unsaid []T
	// failed: the last save failed (a full disk), so Run saves again.
	failed bool
	// gen counts the removals kept in unsaid, saved is the count the
	// last save listed.
	gen, saved uint64
}

// New returns a keeper of the file at path ("" keeps nothing). list gives
// the collector's latest targets: it is called under the keeper's lock,
// so of two saves the last written has the latest list, and it may take
// the collector's own lock (the keeper's comes first). name gives a
// target's name, which a target listed again is matched by. who names the
// collector in log lines ("snmp", "gnmi").
func New[T any](path string, list func() []T, name func(T) string, log *slog.Logger, who string) *Keeper[T] {
	return &Keeper[T]{path: path, list: list, name: name, log: log, who: who}
}

// Path is the state file's path; "" for none.
func (k *Keeper[T]) Path() string { return k.path }

// Save replaces the state file with the latest targets and the unsaid
// removals of targets not listed again.
func (k *Keeper[T]) Save() {
	if k.path == "" {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.save()
}

// save is Save with k.mu held.
func (k *Keeper[T]) save() {
	targets := k.list()
	k.saved = k.gen
	if len(k.unsaid) > 0 {
		listed := make(map[string]bool, len(targets))
		for _, t := range targets {
			listed[k.name(t)] = true
		}
		k.unsaid = slices.DeleteFunc(k.unsaid, func(u T) bool { return listed[k.name(u)] })
		targets = append(targets[:len(targets):len(targets)], k.unsaid...)
	}
	err := Write(k.path, targets)
	switch {
	case err != nil && !k.failed:
		k.log.Warn(k.who+": cannot keep the list of targets, trying again every "+wholefile.RetryEvery.String()+"; until then one taken out of the config while weir is stopped will not be told removed at the next start",
			slog.String("file", k.path), slog.Any("err", err))
	case err == nil && k.failed:
		k.log.Info(k.who+": the list of targets is kept again", slog.String("file", k.path))
	}
	k.failed = err != nil
}

// Unsaid keeps removed targets whose removal was not published, for the
// next save to list, and returns the count to give SaveSince.
func (k *Keeper[T]) Unsaid(removed ...T) (gen uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.unsaid = append(k.unsaid, removed...)
	k.gen++
	return k.gen
}

// SaveSince saves the state file unless a save since has listed the
// removals Unsaid counted gen. The removals of a reload that the broker
// did not take fail together, at their one deadline, and each would save
// the file (synced) in turn: the first save lists them all, and the rest
// find they were saved.
func (k *Keeper[T]) SaveSince(gen uint64) {
	if k.path == "" {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.saved < gen {
		k.save()
	}
}

// Run saves again every interval (wholefile.RetryEvery if 0) while the
// last save failed, until ctx ends.
func (k *Keeper[T]) Run(ctx context.Context, interval time.Duration) {
	wholefile.SaveAgain(ctx, interval, func() bool {
		k.mu.Lock()
		defer k.mu.Unlock()
		return k.failed
	}, k.Save)
}
