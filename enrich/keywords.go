package enrich

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
)

// minKeyword is the shortest literal worth a strings.Contains: shorter ones
// are in almost every message.
const minKeyword = 3

// requiredLiterals returns case-sensitive literals of at least minKeyword
// bytes that every match of p contains. A message without one of them
// cannot match, so the rule is skipped without running p: a failed
// regular expression costs microseconds, a strings.Contains nanoseconds.
func requiredLiterals(p *regexp.Regexp) []string {
	re, err := syntax.Parse(p.String(), syntax.Perl)
	if err != nil {
		return nil // p compiled, so this does not happen; no prefilter is always right
	}
	var out []string
	for _, lit := range mustContain(re.Simplify()) {
		if len(lit) >= minKeyword {
			out = append(out, lit)
		}
	}
	return out
}

// mustContain returns literals every string re matches contains. It only
// looks through concatenations, captures and repetitions of at least one;
// alternations, optional parts and case-folded literals contribute
// nothing, which is always safe (fewer literals, a weaker prefilter).
func mustContain(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			return []string{string(re.Rune)}
		}
	case syntax.OpCapture, syntax.OpPlus:
		return mustContain(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return mustContain(re.Sub[0])
		}
	case syntax.OpConcat:
		return concatLiterals(re.Sub)
	}
	return nil
}

// concatLiterals joins adjacent case-sensitive literals of a concatenation
// into one (they are contiguous in every match) and adds what the other
// parts require.
func concatLiterals(subs []*syntax.Regexp) []string {
	var out []string
	var run strings.Builder
	flush := func() {
		if run.Len() > 0 {
			out = append(out, run.String())
			run.Reset()
		}
	}
	for _, sub := range subs {
		if sub.Op == syntax.OpLiteral && sub.Flags&syntax.FoldCase == 0 {
			run.WriteString(string(sub.Rune))
			continue
		}
		flush()
		out = append(out, mustContain(sub)...)
	}
	flush()
	return out
}

// ruleKeywords returns the literals r's patterns require, less those its
// needs literal already tests for.
func ruleKeywords(r *rule) []string {
	var out []string
	for k := range r.pairs {
		if lit := k + "="; !strings.Contains(r.needs, lit) {
			out = append(out, lit)
		}
	}
	slices.Sort(out) // map order would make the classifier differ run to run
	for _, p := range r.patterns {
		for _, lit := range requiredLiterals(p) {
			if !strings.Contains(r.needs, lit) {
				out = append(out, lit)
			}
		}
	}
	return out
}

// hasAll reports whether s contains every one of lits.
func hasAll(s string, lits []string) bool {
	for _, lit := range lits {
		if !strings.Contains(s, lit) {
			return false
		}
	}
	return true
}

// bigramSet is a 256-bit set of hashed adjacent byte pairs, ASCII case
// folded. A text that contains a literal contains all the literal's
// pairs, so a rule whose pairs are not all in the message's cannot match:
// one pass over the message and a few ANDs per rule turn most rules away
// before any strings.Index. False positives (the same pair in another
// case, two pairs of one hash) only cost the Index that follows; one
// folded set serves the rules that ignore case and those that do not.
type bigramSet [4]uint64

// bigramsMaxText bounds the messages the set is made for: past it, the
// pass costs more than the Index calls it would spare.
const bigramsMaxText = 2048

// add adds the pairs of s with bit 0x20 set in every byte, which folds
// ASCII case (and merges a few other pairs: a false positive at worst).
func (b *bigramSet) add(s string) {
	for i := 0; i+1 < len(s); i++ {
		h := bigramHash(s[i]|0x20, s[i+1]|0x20)
		b[h>>6] |= 1 << (h & 63)
	}
}

// bigramHash maps a byte pair to 0..255.
func bigramHash(a, b byte) uint32 { return (uint32(a)<<8 | uint32(b)) * 0x9E3779B1 >> 24 }

// holds reports whether every pair of sub is in b.
func (b *bigramSet) holds(sub *bigramSet) bool {
	return b[0]&sub[0] == sub[0] && b[1]&sub[1] == sub[1] && b[2]&sub[2] == sub[2] && b[3]&sub[3] == sub[3]
}

// ruleBigrams is the set of the pairs of every literal r requires.
func ruleBigrams(r *rule) bigramSet {
	var b bigramSet
	b.add(r.needs)
	for _, k := range r.keywords {
		b.add(k)
	}
	return b
}
