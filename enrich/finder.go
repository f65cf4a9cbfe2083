package enrich

import "strings"

// finder finds one literal in texts, with or without ASCII case, from the
// literal's rarest byte. strings.Index goes from the first byte: in a text
// full of it (a line of "AAAA…", a hex dump) every position is a candidate
// and a 9 KB line took 20 µs for the rule table; the rarest byte of a
// rule's literal ("J" in "ADJCHANGE", "%" in "%ETHPORT-") is seldom in a
// text that lacks the literal, so IndexByte skips the text at memchr speed.
type finder struct {
	lit  string
	fold bool // ignore ASCII case (lit is searched for in any case)
	// at is where in lit the anchor is: the byte searched for, in both
	// cases (lo and up) when fold and it is a letter, else lo == up.
	at     int
	lo, up byte
}

func newFinder(lit string, fold bool) finder {
	f := finder{lit: lit, fold: fold}
	best := -1
	for i := 0; i < len(lit); i++ {
		c := lit[i]
		score := byteRank(c)
		if fold && isLetterASCII(c) {
			c = toLowerASCII(c)
			score = byteRank(c) + byteRank(c-'a'+'A') // two IndexByte passes
		}
		if best < 0 || score < best {
			best, f.at, f.lo, f.up = score, i, c, c
		}
	}
	if fold && f.lo >= 'a' && f.lo <= 'z' {
		f.up = f.lo - 'a' + 'A'
	}
	return f
}

// index is where f's literal first occurs in s, or -1.
func (f *finder) index(s string) int { return f.indexIn(s, nil) }

// indexIn is index, first asking lacks (when not nil; made for s) whether
// s lacks the anchor byte.
func (f *finder) indexIn(s string, lacks *absentBytes) int {
	n := len(f.lit)
	if n == 0 {
		return 0
	}
	if lacks != nil && lacks.lacks(s, f.lo) && (f.up == f.lo || lacks.lacks(s, f.up)) {
		return -1
	}
	// Candidates come in increasing start order, so the first that
	// matches is the leftmost occurrence.
	nextLo, nextUp := -2, -2 // where lo and up next are at or after from; -1: nowhere; -2: not looked
	for from, misses := f.at, 0; from+n-f.at <= len(s); misses++ {
		if !f.fold && misses > 8+from>>5 {
			// The anchor is common in this text after all: strings.Index
			// compares at every position with SIMD, faster than a call
			// per candidate.
			if k := strings.Index(s[from-f.at:], f.lit); k >= 0 {
				return from - f.at + k
			}
			return -1
		}
		if nextLo != -1 && nextLo < from {
			nextLo = indexByteFrom(s, f.lo, from)
		}
		j := nextLo
		if f.up != f.lo {
			if nextUp != -1 && nextUp < from {
				nextUp = indexByteFrom(s, f.up, from)
			}
			if nextUp >= 0 && (j < 0 || nextUp < j) {
				j = nextUp
			}
		}
		start := j - f.at
		if j < 0 || start+n > len(s) {
			return -1
		}
		if f.fold {
			if _, ok := cutFold(s[start:], f.lit); ok {
				return start
			}
		} else if s[start:start+n] == f.lit {
			return start
		}
		from = j + 1
	}
	return -1
}

// absentBytes remembers which bytes one text lacks, each found by one
// IndexByte over it. The rules' finders anchor on 40 bytes between them:
// on a text longer than bigramsMaxText, which no bigram set turns rules
// away from, the anchors a line lacks are scanned for once each, not once
// per rule (a 9 KB line of "AAAA…" took 34 µs, nearly all IndexByte).
type absentBytes struct{ known, absent [4]uint64 }

// lacks reports whether s, the text a is for, lacks c.
func (a *absentBytes) lacks(s string, c byte) bool {
	w, bit := c>>6, uint64(1)<<(c&63)
	if a.known[w]&bit == 0 {
		a.known[w] |= bit
		if strings.IndexByte(s, c) < 0 {
			a.absent[w] |= bit
		}
	}
	return a.absent[w]&bit != 0
}

func isLetterASCII(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// byteRank is roughly how often c occurs in log text, low for rare bytes:
// an estimate, good enough to pick an anchor (a wrong guess costs speed,
// never a match).
func byteRank(c byte) int {
	const lowerByFrequency = "etaoinsrhldcumfpgwybvkxjqz"
	switch {
	case c == ' ':
		return 200
	case c >= 'a' && c <= 'z':
		return 120 - 4*strings.IndexByte(lowerByFrequency, c)
	case c >= 'A' && c <= 'Z':
		// Capitals are mostly at word starts and in mnemonics.
		return 50 - 2*strings.IndexByte(lowerByFrequency, c-'A'+'a')
	case c >= '0' && c <= '9':
		return 70 // addresses, times, counters
	}
	switch c {
	case '.', ':':
		return 60
	case '/', '-', ',', '=':
		return 45
	case '(', ')', '[', ']', '"', '\'', '_':
		return 25
	case '%', '#', '@', '<', '>', '{', '}', '|', '!', '?', '*', '&', '$', '^', '~', '`', '\\', '+', ';':
		return 10
	}
	return 5 // controls and non-ASCII
}

// indexByteFrom is the index of c in s at or after from, or -1.
func indexByteFrom(s string, c byte, from int) int {
	if k := strings.IndexByte(s[from:], c); k >= 0 {
		return from + k
	}
	return -1
}
