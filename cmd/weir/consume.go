package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/configs"
)

// consumedRecord is what consume prints, one JSON object per line, so the
// output pipes into jq.
type consumedRecord struct {
	Topic     string          `json:"topic"`
	Partition int32           `json:"partition"`
	Offset    int64           `json:"offset"`
	Timestamp time.Time       `json:"timestamp"`
	Key       *string         `json:"key"`
	Value     json.RawMessage `json:"value"`
	// Headers by key: a string, null for a null value, and an array of
	// those, in order, for a key the record repeats (Kafka headers are a
	// list, and kcat -H or --header may give a key twice).
	Headers map[string]any `json:"headers,omitempty"`
}

// consumeCmd prints records of a topic. With --from-beginning (or --offset,
// or --since) it reads to the end and exits unless --follow; without either it starts
// at the end and follows, like tail -f. With --group it reads as a member
// of a consumer group (see consumeGroup).
func consumeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("weir consume [flags] TOPIC", stderr)
	cf := clientFlags{reportTo: stderr}
	cf.register(fs)
	fromBeginning := fs.Bool("from-beginning", false, "start at the oldest retained record")
	follow := fs.Bool("follow", false, "keep waiting for new records at the end")
	fs.BoolVar(follow, "f", false, "shorthand for --follow")
	maxRecs := fs.Int("max", 0, "exit after this many records (0: no limit)")
	partition := fs.Int("partition", -1, "read only this partition")
	offset := fs.Int64("offset", -1, "start at this offset (needs --partition)")
	since := fs.String("since", "", "start at the first record at most this long ago (15m, 2d) or at or after this time (RFC 3339)")
	group := fs.String("group", "", "consume as a member of this consumer group, resuming at its committed offsets and committing what is printed")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &exitError{2, errors.New("consume: give one topic")}
	}
	topic := pos[0]
	// -1 and 0 are the flags' "not given": a negative value given is
	// refused, not read as that.
	switch {
	case *offset < 0 && flagGiven(fs, "offset"):
		return &exitError{2, fmt.Errorf("consume: --offset %d: an offset is 0 or more (to start near the end, --since 15m)", *offset)}
	case *partition < 0 && flagGiven(fs, "partition"):
		return &exitError{2, fmt.Errorf("consume: --partition %d: a partition is 0 or more (without --partition, every partition is read)", *partition)}
	case *maxRecs < 0:
		return &exitError{2, fmt.Errorf("consume: --max %d: give a number of records, or 0 for no limit", *maxRecs)}
	}
	if *offset >= 0 && *partition < 0 {
		return &exitError{2, errors.New("consume: --offset needs --partition")}
	}
	var sinceTime time.Time
	if *since != "" {
		if *fromBeginning || *offset >= 0 || *group != "" {
			return &exitError{2, errors.New("consume: --since picks where to start; it does not go with --from-beginning, --offset or --group")}
		}
		if sinceTime, err = parseSince(*since, time.Now()); err != nil {
			return &exitError{2, fmt.Errorf("consume: --since: %w", err)}
		}
	}
	if !*fromBeginning && *offset < 0 && sinceTime.IsZero() {
		*follow = true
	}
	ctx, stopWatch := untilReaderGone(ctx, stdout)
	defer stopWatch()
	if *group != "" {
		if *partition >= 0 {
			return &exitError{2, errors.New("consume: --group lets the group assign partitions; it does not go with --partition or --offset")}
		}
		return consumeGroup(ctx, &cf, topic, *group, *fromBeginning, *follow, *maxRecs, stdout, stderr)
	}

	adm, admCl, err := cf.admin()
	if err != nil {
		return err
	}
	defer admCl.Close()
	mctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	details, err := adm.ListTopics(mctx, topic)
	if err != nil {
		return fmt.Errorf("consume %s: %w", topic, err)
	}
	td, ok := details[topic]
	if !ok || td.Err != nil {
		if !*follow || *partition >= 0 || strings.HasPrefix(topic, "__") { // weir makes no internal topics
			also := "--follow waits for it"
			if *partition >= 0 {
				also = "" // a partition of a topic not made yet is not waited for
			}
			return fmt.Errorf("consume %s: no such topic%s", topic, noTopicHint(topic, also))
		}
		if td, err = waitForTopic(ctx, adm, cf.why, topic, stderr); err != nil {
			if ctx.Err() != nil {
				return nil // Ctrl-C, as while following
			}
			return err
		}
		*fromBeginning = true // a topic made since: every record is new
		mctx, cancel = context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
	}
	ends, err := adm.ListEndOffsets(mctx, topic)
	if err != nil {
		return fmt.Errorf("consume %s: end offsets: %w", topic, err)
	}

	start := kgo.NewOffset().AtEnd()
	if *fromBeginning {
		start = kgo.NewOffset().AtStart()
	}
	var byTime kadm.ListedOffsets
	if !sinceTime.IsZero() {
		if byTime, err = adm.ListOffsetsAfterMilli(mctx, ceilMilli(sinceTime), topic); err != nil {
			return fmt.Errorf("consume %s: offsets at %s: %w", topic, sinceTime.Format(time.RFC3339), err)
		}
	}
	assign := map[int32]kgo.Offset{}
	remaining := map[int32]int64{} // partition -> end offset still to reach
	for p := range td.Partitions {
		if *partition >= 0 && p != int32(*partition) {
			continue
		}
		o := start
		if *offset >= 0 {
			o = kgo.NewOffset().At(*offset)
		}
		e, hasEnd := ends.Lookup(topic, p)
		if hasEnd {
			remaining[p] = e.Offset
		}
		if !sinceTime.IsZero() {
			t, ok := byTime.Lookup(topic, p)
			switch {
			case ok && t.Err != nil:
				return fmt.Errorf("consume %s/%d: offset at %s: %w", topic, p, sinceTime.Format(time.RFC3339), t.Err)
			case ok && t.Offset >= 0:
				o = kgo.NewOffset().At(t.Offset)
				if hasEnd && t.Offset >= e.Offset && !*follow {
					delete(remaining, p) // nothing that recent
				}
			default: // no record at or after the time
				o = kgo.NewOffset().AtEnd()
				delete(remaining, p)
			}
		}
		assign[p] = o
	}
	if len(assign) == 0 {
		return fmt.Errorf("consume %s: no partition %d", topic, *partition)
	}
	if *offset >= 0 {
		// Out of range, the client would start elsewhere (the log start)
		// without a word, or print nothing.
		p := int32(*partition)
		if e, ok := ends.Lookup(topic, p); ok && *offset > e.Offset {
			return &exitError{1, fmt.Errorf("consume %s/%d: offset %d is past the end (%d)", topic, p, *offset, e.Offset)}
		}
		if starts, err := adm.ListStartOffsets(mctx, topic); err == nil {
			if st, ok := starts.Lookup(topic, p); ok && *offset < st.Offset {
				return &exitError{1, fmt.Errorf("consume %s/%d: offset %d is before the log start (%d): retention deleted it", topic, p, *offset, st.Offset)}
			}
		}
	}
	cl, err := cf.client(append(committedOnly(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign}))...)
	if err != nil {
		return err
	}
	defer cl.Close()

	if *follow && *partition < 0 {
		// A Kafka cluster's topic can gain partitions (kafka-topics
		// --alter); keyed records move to them, and a consumer of
		// the partitions of its start would miss those keys' records.
		// It ends with the command (--max, an error), before the
		// clients it uses are closed.
		wctx, stopWatch := context.WithCancel(ctx)
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			watchNewPartitions(wctx, adm, cl, topic, assign, newPartitionsEvery, stderr)
		}()
		defer func() { stopWatch(); <-watched }()
	}

	w := bufio.NewWriter(stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	// Without --follow, partitions already at their end are done.
	if !*follow {
		for p, end := range remaining {
			if *offset >= end {
				delete(remaining, p)
			}
		}
		if *fromBeginning {
			starts, err := adm.ListStartOffsets(mctx, topic)
			if err == nil {
				for p, end := range remaining {
					if s, ok := starts.Lookup(topic, p); ok && s.Offset >= end {
						delete(remaining, p)
					}
				}
			}
		}
	}
	count := 0
	next := map[int32]int64{} // the offset after the last record read per partition
	for *follow || len(remaining) > 0 {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if fetchErr := firstFetchError(fetches, topic, *follow, stderr, nil); fetchErr != nil {
			return fetchErr
		}
		stop := false
		fetches.EachRecord(func(r *kgo.Record) {
			if stop {
				return
			}
			if from, ok := next[r.Partition]; ok && r.Offset > from {
				reportLost(ctx, adm, stderr, r.Topic, r.Partition, from, r.Offset)
			}
			next[r.Partition] = r.Offset + 1
			if end, ok := remaining[r.Partition]; ok && !*follow && r.Offset+1 >= end {
				delete(remaining, r.Partition)
			}
			if r.Attrs.IsControl() {
				return
			}
			if err := enc.Encode(toConsumed(r)); err != nil {
				stop = true
				return
			}
			count++
			if *maxRecs > 0 && count >= *maxRecs {
				stop = true
			}
		})
		if err := w.Flush(); err != nil {
			return writeError(topic, err)
		}
		if stop {
			return nil
		}
	}
	return nil
}

// writeError is a failed write of the records to stdout: nil for a reader
// gone (`| head -1`: it has what it wanted, as with --max), else the
// error (a full disk), so that a script does not take a cut-short output
// for all of it.
func writeError(topic string, err error) error {
	if errors.Is(err, syscall.EPIPE) {
		return nil
	}
	return fmt.Errorf("consume %s: writing the records: %w", topic, err)
}

// newPartitionsEvery is how often a following consume looks for partitions
// added to its topic.
const newPartitionsEvery = 10 * time.Second

// watchNewPartitions adds partitions of topic created after the command
// started, read from their start, to cl, until ctx ends. Every partition
// reads as new after the topic is deleted and made again with more; the
// client resets those it reads already (and says so, with --follow).
func watchNewPartitions(ctx context.Context, adm *kadm.Client, cl *kgo.Client, topic string, assigned map[int32]kgo.Offset, every time.Duration, stderr io.Writer) {
	known := map[int32]bool{}
	for p := range assigned {
		known[p] = true
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		lctx, cancel := context.WithTimeout(ctx, every)
		details, err := adm.ListTopics(lctx, topic)
		cancel()
		td, ok := details[topic]
		if err != nil || !ok || td.Err != nil {
			continue // the fetches say what is wrong with the broker or topic
		}
		add := map[int32]kgo.Offset{}
		for p := range td.Partitions {
			if !known[p] {
				known[p] = true
				add[p] = kgo.NewOffset().AtStart()
			}
		}
		if len(add) > 0 {
			fmt.Fprintf(stderr, "weir: consume %s: %d partition(s) added to the topic; reading them from their start\n", topic, len(add))
			cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: add})
		}
	}
}

// waitForTopic waits until topic exists, for a consume that follows one
// not made yet (dead.letter before a sink's first dead letter, a topic a
// producer makes with its first record): it says so once on stderr and
// looks again every second, until ctx ends. A look that fails (the broker
// away) is said too, once until one works again, so that the wait does
// not look like a topic not made for as long as the broker is away. why
// adds the cause of a look that ran out of time (clientFlags.why).
func waitForTopic(ctx context.Context, adm *kadm.Client, why func(error) error, topic string, stderr io.Writer) (kadm.TopicDetail, error) {
	fmt.Fprintf(stderr, "weir: consume %s: no such topic yet; waiting for it to be made (Ctrl-C to stop)\n", topic)
	failing := false
	for {
		select {
		case <-ctx.Done():
			return kadm.TopicDetail{}, ctx.Err()
		case <-time.After(time.Second):
		}
		lctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		details, err := adm.ListTopics(lctx, topic)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			failing = true
			fmt.Fprintf(stderr, "weir: consume %s: looking for the topic failed: %v (retrying)\n", topic, why(err))
		case err == nil && failing:
			failing = false
			fmt.Fprintf(stderr, "weir: consume %s: the broker answers again; no such topic yet, waiting\n", topic)
		}
		if td, ok := details[topic]; err == nil && ok && td.Err == nil {
			return td, nil
		}
	}
}

// consumeGroup prints records of topic as a member of consumer group: the
// group's members share the topic's partitions; each partition starts at
// the group's committed offset, else at the log start with
// --from-beginning and at the end without. What was printed is committed
// when partitions move to another member and on exit (also on Ctrl-C), so
// the next run of the group starts after it. Without --follow it exits once
// every partition it owns is read up to the end offsets of when it started.
// Following a topic not made yet, it waits for it and reads it from its
// start, as a plain consume does.
func consumeGroup(ctx context.Context, cf *clientFlags, topic, group string, fromBeginning, follow bool, maxRecs int, stdout, stderr io.Writer) (err error) {
	adm, admCl, err := cf.admin()
	if err != nil {
		return err
	}
	defer admCl.Close()
	mctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	details, err := adm.ListTopics(mctx, topic)
	if err != nil {
		return fmt.Errorf("consume %s: %w", topic, err)
	}
	td, ok := details[topic]
	if !ok || td.Err != nil {
		if !follow || strings.HasPrefix(topic, "__") {
			return fmt.Errorf("consume %s: no such topic%s", topic, noTopicHint(topic, "--follow waits for it"))
		}
		if td, err = waitForTopic(ctx, adm, cf.why, topic, stderr); err != nil {
			if ctx.Err() != nil {
				return nil // Ctrl-C, as while following
			}
			return err
		}
		fromBeginning = true // a topic made since: every record is new
	}
	// Where "the end" is, for stopping without --follow.
	var ends, starts kadm.ListedOffsets
	if !follow {
		if ends, err = adm.ListEndOffsets(mctx, topic); err != nil {
			return fmt.Errorf("consume %s: end offsets: %w", topic, err)
		}
		if starts, err = adm.ListStartOffsets(mctx, topic); err != nil {
			return fmt.Errorf("consume %s: start offsets: %w", topic, err)
		}
	}

	// The assignment, as the group hands it out (callbacks run in the
	// client's goroutines).
	var (
		mu       sync.Mutex
		assigned = map[int32]bool{}
		joined   bool
		changed  bool
	)
	track := func(add bool) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(_ context.Context, _ *kgo.Client, tps map[string][]int32) {
			mu.Lock()
			defer mu.Unlock()
			for _, p := range tps[topic] {
				if add {
					assigned[p] = true
				} else {
					delete(assigned, p)
				}
			}
			joined = joined || add
			changed = true
		}
	}
	// The partitions of the start: one of them the group has not
	// committed starts at the end without --from-beginning; one added
	// since (a Kafka cluster's topic given more partitions) at its start,
	// so what keys moved to it before the group took it is read.
	initial := map[int32]bool{}
	for p := range td.Partitions {
		initial[p] = true
	}
	// commits are the group's committed offsets of the partitions
	// assigned here since the last poll (-1: none), where reading them
	// must begin: a first record past one may say that retention deleted
	// what was between. A partition that comes back from another member
	// begins at its commit, not after what was printed of it before.
	commits := map[int32]int64{}
	adjust := func(_ context.Context, offsets map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
		added := 0
		for p, o := range offsets[topic] {
			at := o.EpochOffset().Offset
			mu.Lock()
			commits[p] = max(at, -1)
			mu.Unlock()
			if at >= 0 {
				continue // committed
			}
			switch {
			case !initial[p]:
				offsets[topic][p] = kgo.NewOffset().AtStart()
				added++
			case !fromBeginning:
				offsets[topic][p] = kgo.NewOffset().AtEnd()
			}
		}
		if added > 0 && follow {
			fmt.Fprintf(stderr, "weir: consume %s: %d partition(s) added to the topic; reading them from their start\n", topic, added)
		}
		return offsets, nil
	}
	opts := append(committedOnly(),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		// Where a partition the group has not committed starts is
		// adjust's; this is where one whose records were deleted before
		// they were read (retention passing it, the topic made again)
		// reads on: from the log start, not skipping what it holds.
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AdjustFetchOffsetsFn(adjust),
		// Commit what was printed, not what was fetched.
		kgo.AutoCommitMarks(),
		// Partitions move only between polls, after the records of a
		// poll are printed and marked, so their commit on revocation
		// covers them.
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(track(true)),
		kgo.OnPartitionsRevoked(track(false)),
		kgo.OnPartitionsLost(track(false)),
		// A fetch that long-polls partitions already at their end
		// holds back partitions assigned meanwhile until it returns
		// (the client has one fetch in flight per broker); keep that
		// wait short.
		kgo.FetchMaxWait(500*time.Millisecond),
	)
	if follow {
		// A Kafka cluster's topic can gain partitions (kafka-topics
		// --alter), to which keys move: look for them as often as the
		// plain consume does (the client's default is 5 minutes).
		opts = append(opts, kgo.MetadataMaxAge(newPartitionsEvery))
	}
	cl, err := cf.client(opts...)
	if err != nil {
		return err
	}
	defer func() {
		// ctx may be done (Ctrl-C): the final commit gets its own time.
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if cerr := cl.CommitMarkedOffsets(cctx); cerr != nil && err == nil {
			err = fmt.Errorf("consume %s: commit for group %s: %w", topic, group, cerr)
		}
		cl.CloseAllowingRebalance()
	}()

	// out counts the bytes stdout took, so that a write failing partway
	// through a poll's records (a full disk, the reader gone) still
	// commits the records written whole before it.
	out := &countingWriter{w: stdout}
	w := bufio.NewWriter(out)
	defer w.Flush() // before the commit above: commit what was printed
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)

	next := map[int32]int64{} // the offset after the last record printed per partition
	// expect is the offset the next record of a partition should have,
	// from its commit or the last record read, for reportLost.
	expect := map[int32]int64{}
	var committed kadm.OffsetResponses
	// caughtUp reports whether every owned partition is read up to the
	// end offsets taken at the start. A partition not read from yet starts
	// where the group says (its commit, else the reset position); commits
	// are looked up again when the assignment changes, since another
	// member may have committed the partitions that moved here.
	caughtUp := func() (bool, error) {
		mu.Lock()
		if !joined {
			mu.Unlock()
			return false, nil
		}
		refresh := changed
		changed = false
		owned := make([]int32, 0, len(assigned))
		for p := range assigned {
			owned = append(owned, p)
		}
		mu.Unlock()
		if refresh {
			var err error
			if committed, err = adm.FetchOffsetsForTopics(ctx, group, topic); err != nil {
				return false, fmt.Errorf("consume %s: committed offsets of group %s: %w", topic, group, err)
			}
		}
		for _, p := range owned {
			end, _ := ends.Lookup(topic, p)
			pos, ok := next[p]
			if !ok {
				pos = end.Offset
				s, hasStart := starts.Lookup(topic, p)
				if c, ok := committed.Lookup(topic, p); ok && c.Err == nil && c.At >= 0 {
					pos = c.At
					// A commit retention has passed since: the
					// client starts over at the log start, and
					// nothing may be left there to print.
					if hasStart && fromBeginning && pos < s.Offset {
						pos = s.Offset
					}
				} else if hasStart && fromBeginning {
					pos = s.Offset
				}
			}
			if pos < end.Offset {
				return false, nil
			}
		}
		return true, nil
	}

	count := 0
	for {
		if !follow {
			done, err := caughtUp()
			if err != nil || done {
				return err
			}
		}
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if !follow {
			// Wake up now and then to see whether the assignment
			// that arrived leaves nothing to read.
			pctx, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
		}
		fetches := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		fetchErr := firstFetchError(fetches, topic, follow, stderr, func(err error) bool {
			return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
		})
		// Partitions move only between polls (BlockRebalanceOnPoll):
		// the records of one assigned since begin where adjust said.
		mu.Lock()
		for p, at := range commits {
			if at >= 0 {
				expect[p] = at
			} else {
				delete(expect, p)
			}
		}
		clear(commits)
		mu.Unlock()
		stop := false
		var printed []*kgo.Record // marked for the commit once written
		var ends []int64          // where each of printed ends in the output
		fetches.EachRecord(func(r *kgo.Record) {
			if stop {
				return
			}
			if from, ok := expect[r.Partition]; ok && r.Offset > from {
				reportLost(ctx, adm, stderr, r.Topic, r.Partition, from, r.Offset)
			}
			expect[r.Partition] = r.Offset + 1
			if r.Attrs.IsControl() {
				printed = append(printed, r)
				ends = append(ends, out.n+int64(w.Buffered()))
				return
			}
			if err := enc.Encode(toConsumed(r)); err != nil {
				stop = true
				return
			}
			printed = append(printed, r)
			ends = append(ends, out.n+int64(w.Buffered()))
			count++
			if maxRecs > 0 && count >= maxRecs {
				stop = true
			}
		})
		// A record is committed once it is written, not buffered: one a
		// full disk or a closed pipe refused is the next run's, and
		// those written whole before it are committed (at exit).
		if err := w.Flush(); err != nil {
			whole := 0
			for whole < len(ends) && ends[whole] <= out.n {
				whole++
			}
			cl.MarkCommitRecords(printed[:whole]...)
			return writeError(topic, err)
		}
		cl.MarkCommitRecords(printed...)
		for _, r := range printed {
			next[r.Partition] = r.Offset + 1
		}
		marked := len(printed) > 0
		if marked && follow && !stop {
			// Commit what was printed now, not at franz-go's next
			// autocommit (5 s on): a broker that restarts forgets the
			// group's members, and the member that joins again starts
			// at the group's commit. A failed commit (the broker
			// gone) is made good by the next one, or the one at exit.
			cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
			cl.CommitMarkedOffsets(cctx)
			ccancel()
		}
		cl.AllowRebalance()
		if fetchErr != nil && follow && passing(fetchErr) {
			// The client reconnects and rejoins the group by itself
			// (a broker restarting); connReporter says so on stderr.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Second):
			}
			continue
		}
		if fetchErr != nil {
			return fetchErr
		}
		if stop {
			return nil
		}
	}
}

// firstFetchError is the first error of fetches that the command reports
// (not one ignored says it waits through), named by fetchError. With
// follow, franz-go's data-loss notices (dataLoss) are printed on stderr
// instead.
func firstFetchError(fetches kgo.Fetches, topic string, follow bool, stderr io.Writer, ignored func(error) bool) error {
	var first error
	fetches.EachError(func(t string, p int32, err error) {
		switch {
		case follow && dataLoss(err):
			fmt.Fprintf(stderr, "weir: %v (reading on)\n", fetchError(topic, t, p, err))
		case first == nil && (ignored == nil || !ignored(err)):
			first = fetchError(topic, t, p, err)
		}
	})
	return first
}

// reportLost says on stderr that records of a partition from offset from
// on, up to the record read at offset at, were deleted before they were
// read, when the log now starts past from: retention passed a reader that
// was behind, or its group's commit. Retention may have moved on since the
// fetch, past at: the records from at on were read all the same. The
// client reads on from the log start without a word (franz-go gives no
// data-loss notice for that case), so a gap in the offsets printed is all
// the reader would see; a gap the log still starts before (records a
// transaction aborted, on a Kafka cluster) is no loss.
func reportLost(ctx context.Context, adm *kadm.Client, stderr io.Writer, topic string, p int32, from, at int64) {
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	starts, err := adm.ListStartOffsets(lctx, topic)
	if err != nil {
		return
	}
	s, ok := starts.Lookup(topic, p)
	if !ok || s.Err != nil || s.Offset <= from {
		return
	}
	fmt.Fprintf(stderr, "weir: consume %s/%d: lost records at offsets %d to %d, deleted before they were read (retention passed them); the log starts at %d (reading on)\n",
		topic, p, from, min(s.Offset, at)-1, s.Offset)
}

// fetchError names the partition of a fetch error, or only the topic for
// the errors the client reports with no partition (joining the group, for
// one), which come with an empty topic; a group whose members consume it
// with another protocol says what to do.
func fetchError(topic, t string, p int32, err error) error {
	if t == "" {
		if errors.Is(err, kerr.InconsistentGroupProtocol) {
			return fmt.Errorf("consume %s: %w (the group's members consume it otherwise: on weir, its own enrichment or a sink; on Kafka, clients with other assignors; use another --group)", topic, err)
		}
		return fmt.Errorf("consume %s: %w", topic, err)
	}
	return fmt.Errorf("consume %s/%d: %w", t, p, err)
}

// dataLoss reports whether err is franz-go's notice that a partition's
// records it was to read next are gone (a topic deleted and made again,
// retention passing a slow reader): it has reset the partition already and
// reads on from there, and so does --follow, having said so. Reading to the
// end, the end known at the start may be gone: the command stops.
func dataLoss(err error) bool {
	var dl *kgo.ErrDataLoss
	return errors.As(err, &dl)
}

// passing reports whether a group consumer's fetch error is one franz-go
// gets over by itself: a broker out of reach, or a group session lost
// (UNKNOWN_MEMBER_ID when the broker restarted) and joined again.
func passing(err error) bool {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Retriable || ke == kerr.UnknownMemberID || ke == kerr.IllegalGeneration || ke == kerr.RebalanceInProgress
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF)
}

// committedOnly are the options of a consuming client that prints what
// transactions committed, never what they aborted (on a Kafka cluster,
// enrichment writes its topics in transactions), and still sees the
// transactions' commit markers: a topic's last offset is often one, and
// reading up to the end must get there.
func committedOnly() []kgo.Opt {
	return []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords()}
}

func toConsumed(r *kgo.Record) consumedRecord {
	c := consumedRecord{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp}
	if r.Key != nil {
		k := string(r.Key)
		c.Key = &k
	}
	c.Value = jsonValue(r.Value)
	if len(r.Headers) > 0 {
		c.Headers = make(map[string]any, len(r.Headers))
		for _, h := range r.Headers {
			var v any // a null value stays null
			if h.Value != nil {
				v = string(h.Value)
			}
			prev, seen := c.Headers[h.Key]
			if !seen {
				c.Headers[h.Key] = v
			} else if vs, repeated := prev.([]any); repeated {
				c.Headers[h.Key] = append(vs, v)
			} else {
				c.Headers[h.Key] = []any{prev, v}
			}
		}
	}
	return c
}

// jsonValue inlines a JSON value as is, so jq can reach into it; anything
// else becomes a JSON string (invalid UTF-8 replaced), null stays null.
func jsonValue(v []byte) json.RawMessage {
	if v == nil {
		return json.RawMessage("null")
	}
	if json.Valid(v) {
		return v
	}
	s := string(v)
	if !utf8.ValidString(s) {
		s = string([]rune(s))
	}
	b, _ := json.Marshal(s)
	return b
}

// parseSince reads --since: a duration back from now (15m, 2d), or a time
// as groups reset's --to-datetime takes it.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := configs.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, fmt.Errorf("%q: want a positive duration such as 15m or 2d, or a time", s)
		}
		return now.Add(-d), nil
	}
	t, err := parseResetTime(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a duration (15m, 2d) nor a time (2026-12-04T14:00:00Z)", s)
	}
	return t, nil
}

// countingWriter is w, counting the bytes it took (n), those of a write
// that failed partway included.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
