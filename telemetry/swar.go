package telemetry

// The JSON scanners and encoders here test eight bytes at a time (SWAR):
// a byte's high bit in the result flags it. The tests are exact for
// whether any byte is flagged and for the lowest flagged byte (borrows
// only run upward), which is all their callers ask.
const (
	swarLo = 0x0101010101010101
	swarHi = 0x8080808080808080
)

// load8 reads s's first eight bytes as a little-endian word.
func load8(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// controlOrHigh flags the bytes of v below 0x20 or from 0x80.
func controlOrHigh(v uint64) uint64 { return (v | (v - swarLo*0x20)) & swarHi }

// byteIs flags the bytes of v equal to c.
func byteIs(v uint64, c byte) uint64 {
	x := v ^ (swarLo * uint64(c))
	return (x - swarLo) &^ x & swarHi
}

// unplainBytes flags the bytes of v a JSON string cannot hold as they
// are: control characters, bytes outside ASCII, '"' and '\\'.
func unplainBytes(v uint64) uint64 {
	return controlOrHigh(v) | byteIs(v, '"') | byteIs(v, '\\')
}

// htmlBytes flags the bytes encoding/json escapes when it escapes HTML.
func htmlBytes(v uint64) uint64 { return byteIs(v, '<') | byteIs(v, '>') | byteIs(v, '&') }

// allDigits reports whether v's eight bytes are all ASCII digits.
func allDigits(v uint64) bool {
	// A byte below '0' borrows into its high bit on subtracting '0'; one
	// above '9' carries into it on adding 0x46 (0x3a + 0x46 = 0x80); a
	// byte from 0x80 has it set already. No byte carries into the next:
	// a digit minus '0' is at most 9, plus 0x46 at most 0xc5 for 0x7f.
	return ((v-swarLo*'0')|(v+swarLo*0x46)|v)&swarHi == 0
}
