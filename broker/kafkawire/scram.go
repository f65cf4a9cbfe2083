package kafkawire

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strings"
)

// scramHash is a SCRAM mechanism's hash (RFC 5802, RFC 7677).
type scramHash func() hash.Hash

func scramHashOf(mechanism string) scramHash {
	switch mechanism {
	case MechanismScramSHA256:
		return sha256.New
	case MechanismScramSHA512:
		return sha512.New
	}
	return nil
}

// scramCred is what a SCRAM server keeps of a password, as Kafka does.
type scramCred struct {
	salt                 []byte
	iters                int
	storedKey, serverKey []byte
}

func newScramCred(h scramHash, password string) (scramCred, error) {
	salt := make([]byte, 16)
	rand.Read(salt)
	// Passwords as they are, without SASLprep, as Kafka and its
	// clients (librdkafka, franz-go, Java) use them.
	salted, err := pbkdf2.Key(h, password, salt, scramIterations, h().Size())
	if err != nil {
		return scramCred{}, err
	}
	clientKey := scramHMAC(h, salted, "Client Key")
	sum := h()
	sum.Write(clientKey)
	return scramCred{salt: salt, iters: scramIterations, storedKey: sum.Sum(nil), serverKey: scramHMAC(h, salted, "Server Key")}, nil
}

// mockScramCred is the credential of an unknown user: a salt derived
// from key and the name, the same at every attempt as a user's own is,
// and keys no proof matches.
func mockScramCred(h scramHash, key []byte, mechanism, user string) scramCred {
	mac := scramHMAC(sha256.New, key, mechanism+"\x00"+user)
	return scramCred{salt: mac[:16], iters: scramIterations, storedKey: make([]byte, h().Size()), serverKey: make([]byte, h().Size())}
}

func scramHMAC(h scramHash, key []byte, msg string) []byte {
	m := hmac.New(h, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// scramConv is the server side of one SCRAM exchange: client-first,
// server-first, client-final, server-final.
type scramConv struct {
	h      scramHash
	lookup func(user string) (scramCred, bool)

	user        string
	cred        scramCred
	gs2Header   string
	clientBare  string // client-first-message-bare
	serverFirst string
	nonce       string // client's and server's, as server-first sent it
	unknown     bool   // the user is not known: cred is a mock (mockScramCred)
	done        bool
}

// errUnknownUser and errBadProof are refused credentials; other step
// errors are malformed messages.
var (
	errUnknownUser = errors.New("unknown user")
	errBadProof    = errors.New("wrong password")
)

// step takes the client's next message and returns the server's.
func (s *scramConv) step(msg string) (string, error) {
	if s.serverFirst == "" {
		return s.first(msg)
	}
	if s.done {
		return "", errors.New("a message after the exchange ended")
	}
	return s.final(msg)
}

func (s *scramConv) first(msg string) (string, error) {
	// gs2-header: channel binding flag, authzid; then the bare message.
	flag, rest, ok := strings.Cut(msg, ",")
	if !ok {
		return "", errors.New("client-first-message without a gs2 header")
	}
	switch {
	case flag == "n", flag == "y":
	case strings.HasPrefix(flag, "p="):
		return "", errors.New("channel binding is not supported")
	default:
		return "", fmt.Errorf("client-first-message: bad channel binding flag %q", flag)
	}
	authz, bare, ok := strings.Cut(rest, ",")
	if !ok || (authz != "" && !strings.HasPrefix(authz, "a=")) {
		return "", errors.New("client-first-message: bad gs2 header")
	}
	s.gs2Header = msg[:len(msg)-len(bare)]
	s.clientBare = bare
	if strings.HasPrefix(bare, "m=") {
		return "", errors.New("client-first-message: mandatory extension not supported")
	}
	fields := strings.Split(bare, ",")
	if len(fields) < 2 || !strings.HasPrefix(fields[0], "n=") || !strings.HasPrefix(fields[1], "r=") || len(fields[1]) == 2 {
		return "", errors.New("client-first-message: want n=user,r=nonce")
	}
	user, ok := saslName(fields[0][2:])
	if !ok {
		return "", errors.New("client-first-message: bad user name encoding")
	}
	s.user = user
	if authz != "" {
		z, ok := saslName(authz[2:])
		if !ok || z != user {
			return "", fmt.Errorf("user %q asked to act as %q: %w", user, authz[2:], errBadProof)
		}
	}
	// An unknown user gets a mock credential, and the exchange goes on
	// to be refused at the client-final as a wrong password is: a
	// refusal here would tell which user names exist (RFC 5802,
	// section 9).
	cred, ok := s.lookup(user)
	s.cred, s.unknown = cred, !ok
	sn := make([]byte, 24)
	rand.Read(sn)
	s.nonce = fields[1][2:] + base64.RawURLEncoding.EncodeToString(sn)
	s.serverFirst = fmt.Sprintf("r=%s,s=%s,i=%d", s.nonce, base64.StdEncoding.EncodeToString(cred.salt), cred.iters)
	return s.serverFirst, nil
}

func (s *scramConv) final(msg string) (string, error) {
	// c=binding,r=nonce[,extensions],p=proof
	cut := strings.LastIndex(msg, ",p=")
	if cut < 0 {
		return "", errors.New("client-final-message without a proof")
	}
	withoutProof := msg[:cut]
	fields := strings.Split(withoutProof, ",")
	if len(fields) < 2 || !strings.HasPrefix(fields[0], "c=") || !strings.HasPrefix(fields[1], "r=") {
		return "", errors.New("client-final-message: want c=binding,r=nonce,p=proof")
	}
	if cb, err := base64.StdEncoding.DecodeString(fields[0][2:]); err != nil || string(cb) != s.gs2Header {
		return "", errors.New("client-final-message: channel binding does not match the gs2 header")
	}
	// Kafka checks that the nonce ends with the one it sent, and so
	// accepts librdkafka's (before 2.x?), which repeats the client's
	// part: "r=" client nonce, then server-first's whole nonce.
	if !strings.HasSuffix(fields[1][2:], s.nonce) {
		return "", errors.New("client-final-message: nonce does not match")
	}
	proof, err := base64.StdEncoding.DecodeString(msg[cut+3:])
	if err != nil || len(proof) != len(s.cred.storedKey) {
		return "", errors.New("client-final-message: bad proof encoding")
	}
	authMsg := s.clientBare + "," + s.serverFirst + "," + withoutProof
	sig := scramHMAC(s.h, s.cred.storedKey, authMsg)
	clientKey := make([]byte, len(proof))
	for i := range proof {
		clientKey[i] = proof[i] ^ sig[i]
	}
	sum := s.h()
	sum.Write(clientKey)
	match := subtle.ConstantTimeCompare(sum.Sum(nil), s.cred.storedKey) == 1
	switch {
	case s.unknown:
		return "", errUnknownUser
	case !match:
		return "", errBadProof
	}
	s.done = true
	return "v=" + base64.StdEncoding.EncodeToString(scramHMAC(s.h, s.cred.serverKey, authMsg)), nil
}

// saslName decodes a SCRAM user name: "=2C" is ',' and "=3D" is '='; any
// other '=' is malformed.
func saslName(s string) (string, bool) {
	if !strings.Contains(s, "=") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}
