package enrich

import (
	"regexp"
	"regexp/syntax"
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
