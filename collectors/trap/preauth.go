package trap

import (
	"crypto"
	"crypto/hmac"
	"crypto/subtle"
	"hash"

	"github.com/gosnmp/gosnmp"
)

// authKey is a configured v3 user entry's key as RFC 3414 (section 2.6)
// and RFC 7860 derive it from its password before localising it to an
// engine: made once, at New, as it hashes a megabyte.
type authKey struct {
	hash   crypto.Hash
	ku     []byte
	digest int // msgAuthenticationParameters' length: the HMAC truncated
}

// newAuthKey derives an entry's key; ok false for an entry without
// authentication.
func newAuthKey(usm *gosnmp.UsmSecurityParameters) (authKey, bool) {
	var digest int
	switch usm.AuthenticationProtocol {
	case gosnmp.MD5, gosnmp.SHA:
		digest = 12
	case gosnmp.SHA224:
		digest = 16
	case gosnmp.SHA256:
		digest = 24
	case gosnmp.SHA384:
		digest = 32
	case gosnmp.SHA512:
		digest = 48
	default:
		return authKey{}, false
	}
	h := usm.AuthenticationProtocol.HashType()
	return authKey{hash: h, ku: passwordToKey(h.New(), usm.AuthenticationPassphrase), digest: digest}, true
}

// passwordToKey is RFC 3414's password to key algorithm (appendix A.2):
// the hash of a megabyte of the password repeated.
func passwordToKey(h hash.Hash, password string) []byte {
	if password == "" {
		return h.Sum(nil)
	}
	var block [64]byte
	for i, n := 0, 0; n < 1<<20; n += len(block) {
		for j := range block {
			block[j] = password[i%len(password)]
			i++
		}
		h.Write(block[:])
	}
	return h.Sum(nil)
}

// authenticates reports whether pkt, an SNMPv3 message whose header is
// h (parseV3Header), carries the digest k localised to its engine gives
// it (RFC 3414 section 6.3.2 and 7.3.2; RFC 7860 section 4.2.2): the
// HMAC of the whole message with msgAuthenticationParameters zeroed.
func (k authKey) authenticates(pkt []byte, h v3Header) bool {
	mac, ok := k.digestOf(pkt, h)
	return ok && subtle.ConstantTimeCompare(mac, h.authParams) == 1
}

// sign writes into pkt, a message weir changed after authenticates
// passed on it as received (see withoutInvalid), the digest k gives it.
func (k authKey) sign(pkt []byte, h v3Header) bool {
	mac, ok := k.digestOf(pkt, h)
	if ok {
		copy(h.authParams, mac)
	}
	return ok
}

// digestOf is the digest k gives pkt, whose header is h: the HMAC of the
// whole message with msgAuthenticationParameters zeroed.
func (k authKey) digestOf(pkt []byte, h v3Header) ([]byte, bool) {
	if len(h.authParams) != k.digest {
		return nil, false
	}
	// h.authParams is a slice of pkt: where it starts in pkt is what the
	// two capacities differ by.
	at := cap(pkt) - cap(h.authParams)
	if at < 0 || at+k.digest > len(pkt) {
		return nil, false
	}
	local := k.hash.New()
	local.Write(k.ku)
	local.Write([]byte(h.engineID))
	local.Write(k.ku)
	mac := hmac.New(k.hash.New, local.Sum(nil))
	mac.Write(pkt[:at])
	var zeros [48]byte
	mac.Write(zeros[:k.digest])
	mac.Write(pkt[at+k.digest:])
	return mac.Sum(nil)[:k.digest], true
}

// preAuthenticate refuses, before gosnmp decodes it, a v3 message for a
// configured user that none of the user's keys signed: gosnmp derives the
// user's privacy key for the message's engine ID before it checks the
// digest, and for AES, AES192C and AES256C (Reeder's key extension) that
// hashes a megabyte and stays in a process-wide cache. A forged datagram
// naming a new engine ID each time, from anyone who saw a user name on
// the wire, cost milliseconds of the one read loop and memory for ever.
// A message that is not of SNMPv1 or v2c and whose v3 header does not
// parse is malformed: gosnmp may read it as a v3 message for a user all
// the same (it takes fields of any type, and reads past the lengths of
// the sequences they are in). A signed message for a user none of whose
// entries has keys is unsupported_security_level. "" lets gosnmp decide
// (a v1 or v2c message, an unknown user, a user with an entry without
// keys).
func (a *access) preAuthenticate(pkt []byte) string {
	if communityMessage(pkt) {
		return ""
	}
	h, ok := parseV3Header(pkt)
	if !ok {
		return OutcomeMalformed
	}
	entries := a.users[h.user]
	if len(entries) == 0 {
		return ""
	}
	keyed := 0
	for _, u := range entries {
		if u.keyed {
			keyed++
		}
	}
	if keyed == 0 && h.flags&byte(gosnmp.AuthNoPriv) != 0 {
		// Signed for a user weir has no keys for: a level the user
		// does not support (RFC 3414 section 3.2 step 5), not a wrong
		// password.
		return OutcomeLowSecurityLevel
	}
	if keyed < len(entries) {
		return "" // an entry without keys: nothing costly to derive
	}
	if h.flags&byte(gosnmp.AuthNoPriv) == 0 {
		// Neither signed nor encrypted, for a user whose every entry
		// has keys: what gosnmp refuses for its security level.
		return OutcomeAuthFailure
	}
	for _, u := range entries {
		if u.auth.authenticates(pkt, h) {
			return ""
		}
	}
	return OutcomeAuthFailure
}

// communityMessage reports whether pkt is an SNMPv1 or v2c message as
// gosnmp reads its version: 0 or 1, in however many octets.
func communityMessage(pkt []byte) bool {
	msg, _, ok := berTLV(pkt, 0x30)
	if !ok {
		return false
	}
	version, _, ok := berTLV(msg, 0x02)
	return ok && (berIntIs(version, 0) || berIntIs(version, 1))
}
