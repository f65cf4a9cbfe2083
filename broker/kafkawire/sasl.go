package kafkawire

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The SASL mechanisms the listener speaks.
const (
	MechanismPlain       = "PLAIN"
	MechanismScramSHA256 = "SCRAM-SHA-256"
	MechanismScramSHA512 = "SCRAM-SHA-512"
)

// scramIterations is the PBKDF2 iteration count of the SCRAM credentials
// the listener derives from its users' passwords: Kafka's minimum, and
// franz-go's (it refuses fewer).
const scramIterations = 4096

// User is a user the listener authenticates with SASL.
type User struct {
	Name, Password string
	// ReadOnly users may read (Metadata, Fetch, ListOffsets, Describe*,
	// the consumer group APIs, OffsetCommit included) but not write:
	// Produce, CreateTopics, DeleteTopics, AlterConfigs,
	// IncrementalAlterConfigs and DeleteGroups are answered with
	// TOPIC_, CLUSTER_ or GROUP_AUTHORIZATION_FAILED, InitProducerID
	// (idempotent producers) with CLUSTER_AUTHORIZATION_FAILED, and
	// Metadata creates no topic for them.
	ReadOnly bool
	// Topics, when not nil, are the only topics the user may use (read,
	// and write unless ReadOnly), and Groups the only consumer groups:
	// the others are answered TOPIC_ or GROUP_AUTHORIZATION_FAILED, and
	// left out of listings, as Kafka's ACLs do (acl.go).
	Topics, Groups Patterns
}

// equal reports whether u and v are the same user with the same rights.
func (u User) equal(v User) bool {
	return u.Name == v.Name && u.Password == v.Password && u.ReadOnly == v.ReadOnly &&
		(u.Topics == nil) == (v.Topics == nil) && slices.Equal(u.Topics, v.Topics) &&
		(u.Groups == nil) == (v.Groups == nil) && slices.Equal(u.Groups, v.Groups)
}

// SASL is the authentication a listener requires (WithSASL): made by
// NewSASL, it may be shared by several servers, and Update changes its
// mechanisms and users while they serve.
type SASL struct {
	st atomic.Pointer[saslState]
	// mu orders Update's store of a new state, and its closing of the
	// removed users' sessions, with authentications, so that none
	// authenticates as a user an Update removed and escapes it.
	mu       sync.Mutex
	sessions map[string]map[*session]struct{} // by user name
}

// saslState is one set of mechanisms and users: a connection takes the
// one current at its SaslHandshake for its whole exchange.
type saslState struct {
	mechanisms []string
	users      map[string]*User
	scram      map[string]map[string]scramCred // by mechanism, user
	given      []User                          // as NewSASL or Update had them
	mockKey    []byte                          // for unknown users' SCRAM salts (mockScramCred)
}

// NewSASL enables mechanisms (MechanismPlain, MechanismScramSHA256,
// MechanismScramSHA512) for users. SCRAM credentials are derived from
// the passwords now, with a random salt and 4096 iterations, as Kafka
// stores them; passwords are used as they are, without SASLprep, as Kafka
// and its clients do.
func NewSASL(mechanisms []string, users []User) (*SASL, error) {
	st, err := newSASLState(mechanisms, users)
	if err != nil {
		return nil, err
	}
	s := &SASL{sessions: map[string]map[*session]struct{}{}}
	s.st.Store(st)
	return s, nil
}

// Update replaces the mechanisms and users, checked as NewSASL checks
// them (an error changes nothing): a password rotated, a user added or
// removed, read_only changed. Connections that authenticate afterwards
// get the new ones (one that did its SaslHandshake before and
// authenticates after as a removed user is refused); those that already
// did keep their session, with their user's new rights from their next
// request (refreshUser). A removed user's connections are closed here: an
// idle one at once, one handling a request once it is answered, one in
// a Fetch long-poll at once too. The same mechanisms and users again
// change nothing (the SCRAM credentials are not derived again).
func (s *SASL) Update(mechanisms []string, users []User) error {
	if cur := s.st.Load(); slices.Equal(cur.mechanisms, mechanisms) && slices.EqualFunc(cur.given, users, User.equal) {
		return nil
	}
	st, err := newSASLState(mechanisms, users)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.Store(st)
	for name, sessions := range s.sessions {
		if st.users[name] != nil {
			continue
		}
		for sess := range sessions {
			sess.remove()
		}
		delete(s.sessions, name)
	}
	return nil
}

// register records sess as a connection of user name, for Update to
// close if the user is removed; false if the current users (an Update
// since the connection's SaslHandshake) have no such user.
func (s *SASL) register(name string, sess *session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.Load().users[name] == nil {
		return false
	}
	m := s.sessions[name]
	if m == nil {
		m = map[*session]struct{}{}
		s.sessions[name] = m
	}
	m[sess] = struct{}{}
	return true
}

// unregister forgets a closed connection's session.
func (s *SASL) unregister(name string, sess *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.sessions[name]; m != nil {
		delete(m, sess)
		if len(m) == 0 {
			delete(s.sessions, name)
		}
	}
}

// session is an authenticated connection as Update sees it. Its socket
// is closed by Update only between requests: a request being handled
// is answered first (its connection goroutine then closes), so that
// nothing it did goes unanswered while the connection is open.
type session struct {
	mu   sync.Mutex
	busy bool // a request is being handled
	gone bool // an Update removed its user
	// removed is closed with gone: it ends a Fetch long-poll.
	removed chan struct{}
	close   func() error // closes the socket
}

func newSession(close func() error) *session {
	// Busy: it is made while its SaslAuthenticate is handled.
	return &session{busy: true, removed: make(chan struct{}), close: close}
}

// remove marks the session's user removed, and closes its socket if no
// request is being handled.
func (s *session) remove() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return
	}
	s.gone = true
	close(s.removed)
	if !s.busy {
		s.close()
	}
}

// begin marks a request being handled; false if the user was removed
// (the request is not handled). A nil session (no SASL, or not
// authenticated yet) has nothing to mark.
func (s *session) begin() bool {
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy = !s.gone
	return !s.gone
}

// end marks the request answered; false if the user was removed
// meanwhile, and the connection must close.
func (s *session) end() bool {
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy = false
	return !s.gone
}

// isGone reports whether an Update removed the session's user.
func (s *session) isGone() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone
}

// removedCh is closed when an Update removes the session's user; nil
// (never ready) for a nil session.
func (s *session) removedCh() <-chan struct{} {
	if s == nil {
		return nil
	}
	return s.removed
}

func (s *SASL) state() *saslState { return s.st.Load() }

func newSASLState(mechanisms []string, users []User) (*saslState, error) {
	if len(mechanisms) == 0 {
		return nil, errors.New("sasl: no mechanism")
	}
	if len(users) == 0 {
		return nil, errors.New("sasl: no user")
	}
	s := &saslState{mechanisms: slices.Clone(mechanisms), users: map[string]*User{}, scram: map[string]map[string]scramCred{}, given: slices.Clone(users),
		mockKey: make([]byte, 32)}
	rand.Read(s.mockKey)
	for _, u := range users {
		if u.Name == "" || u.Password == "" {
			return nil, errors.New("sasl: a user without a name or a password")
		}
		if s.users[u.Name] != nil {
			return nil, fmt.Errorf("sasl: user %q twice", u.Name)
		}
		for _, p := range [][]string{u.Topics, u.Groups} {
			if err := Patterns(p).Check(); err != nil {
				return nil, fmt.Errorf("sasl: user %q: %w", u.Name, err)
			}
		}
		s.users[u.Name] = &u
	}
	for _, m := range mechanisms {
		if m == MechanismPlain {
			continue
		}
		h := scramHashOf(m)
		if h == nil {
			return nil, fmt.Errorf("sasl: unknown mechanism %q (%s, %s or %s)", m, MechanismPlain, MechanismScramSHA256, MechanismScramSHA512)
		}
		creds := map[string]scramCred{}
		for name, u := range s.users {
			c, err := newScramCred(h, u.Password)
			if err != nil {
				return nil, fmt.Errorf("sasl: user %q: %w", name, err)
			}
			creds[name] = c
		}
		s.scram[m] = creds
	}
	return s, nil
}

// WithSASL requires clients to authenticate (Kafka's SASL_PLAINTEXT, or
// SASL_SSL with WithTLS) with SaslHandshake v0–1 and SaslAuthenticate
// v0–2 (KIP-152) before any other request but ApiVersions: a client that
// sends one closes its connection, as Kafka does, and so does one that
// has not authenticated within the frame timeout (WithFrameTimeout) of
// connecting. Refused credentials are
// answered SASL_AUTHENTICATION_FAILED with a message, and the connection
// closes. Failures are reported to Metrics.AuthFailed and logged at most
// every 10 s. nil: no authentication (the default).
func WithSASL(s *SASL) Option {
	return func(c *config) { c.sasl = s }
}

// preAuth reports whether a request of API key may come before SASL
// authentication.
func preAuth(key int16) bool {
	switch kmsg.Key(key) {
	case kmsg.ApiVersions, kmsg.SASLHandshake, kmsg.SASLAuthenticate:
		return true
	}
	return false
}

// authenticated reports whether the connection may send any request:
// SASL is off, or the client authenticated.
func (c *conn) authenticated() bool { return c.s.cfg.sasl == nil || c.user != nil }

func (c *conn) handleSASLHandshake(req *kmsg.SASLHandshakeRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	sasl := c.s.cfg.sasl.state()
	resp.SupportedMechanisms = sasl.mechanisms
	switch {
	case c.user != nil || c.saslMech != "":
		// The session never expires (SessionLifetimeMillis 0), so
		// clients do not authenticate again (KIP-368).
		resp.ErrorCode = kerr.IllegalSaslState.Code
		c.closing = &authError{"malformed", "SaslHandshake on a connection that already did one"}
	case !slices.Contains(sasl.mechanisms, req.Mechanism):
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		c.closing = &authError{"mechanism", fmt.Sprintf("SASL mechanism %q is not enabled (broker.kafka_sasl.mechanisms: %s)", req.Mechanism, strings.Join(sasl.mechanisms, ", "))}
	default:
		c.saslMech, c.saslState = req.Mechanism, sasl
		// v0: the SASL tokens follow as bare frames, without Kafka
		// request headers.
		c.saslRaw = req.Version == 0
	}
	return resp
}

func (c *conn) handleSASLAuthenticate(req *kmsg.SASLAuthenticateRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	if c.saslMech == "" || c.user != nil {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		msg := "SaslAuthenticate without SaslHandshake v1 first, or after authentication"
		resp.ErrorMessage = &msg
		c.closing = &authError{"malformed", msg}
		return resp
	}
	out, err := c.saslStep(req.SASLAuthBytes)
	if err != nil {
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := err.client
		resp.ErrorMessage = &msg
		c.closing = err.authError
		return resp
	}
	resp.SASLAuthBytes = out
	return resp
}

// delayRefusal waits, when the connection closes for closing, refused
// credentials, for the failed-authentication delay (see
// WithFailedAuthDelay) before it is answered and closed, or until ctx
// ends.
func (c *conn) delayRefusal(ctx context.Context, closing error) {
	var ae *authError
	d := c.s.cfg.failedAuthDelay
	if d <= 0 || !errors.As(closing, &ae) || ae.reason != "credentials" {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// saslFailure is a refused SASL step: what the client is told, and what
// the log and metrics get.
type saslFailure struct {
	client string
	*authError
}

// saslStep takes the client's next SASL message and returns the answer;
// c.user is set once the client has authenticated.
func (c *conn) saslStep(msg []byte) ([]byte, *saslFailure) {
	mech := c.saslMech
	refused := func(reason, detail string) *saslFailure {
		client := fmt.Sprintf("invalid credentials (unknown user or wrong password) with SASL mechanism %s", mech)
		if reason == "malformed" {
			client = fmt.Sprintf("malformed SASL %s message", mech)
		}
		return &saslFailure{client, &authError{reason, fmt.Sprintf("SASL %s: %s", mech, detail)}}
	}
	sasl := c.saslState
	if mech == MechanismPlain {
		// authzid NUL authcid NUL passwd (RFC 4616).
		parts := bytes.Split(msg, []byte{0})
		if len(parts) != 3 {
			return nil, refused("malformed", "not authzid, user and password separated by NULs")
		}
		name := string(parts[1])
		u := sasl.users[name]
		switch {
		case len(parts[0]) > 0 && string(parts[0]) != name:
			return nil, refused("credentials", fmt.Sprintf("user %q asked to act as %q", name, parts[0]))
		case u == nil:
			return nil, refused("credentials", fmt.Sprintf("unknown user %q", name))
		case subtle.ConstantTimeCompare(parts[2], []byte(u.Password)) != 1:
			return nil, refused("credentials", fmt.Sprintf("wrong password for user %q", name))
		case !c.authenticate(u):
			return nil, refused("credentials", fmt.Sprintf("user %q was removed by a reload during its authentication", name))
		}
		return []byte{}, nil
	}
	if c.scramConv == nil {
		creds, h := sasl.scram[mech], scramHashOf(mech)
		c.scramConv = &scramConv{h: h, lookup: func(name string) (scramCred, bool) {
			cred, ok := creds[name]
			if !ok {
				return mockScramCred(h, sasl.mockKey, mech, name), false
			}
			return cred, true
		}}
	}
	out, err := c.scramConv.step(string(msg))
	switch {
	case errors.Is(err, errUnknownUser):
		return nil, refused("credentials", fmt.Sprintf("unknown user %q", c.scramConv.user))
	case errors.Is(err, errBadProof):
		return nil, refused("credentials", fmt.Sprintf("user %q: %v", c.scramConv.user, err))
	case err != nil:
		return nil, refused("malformed", err.Error())
	}
	if c.scramConv.done && !c.authenticate(sasl.users[c.scramConv.user]) {
		return nil, refused("credentials", fmt.Sprintf("user %q was removed by a reload during its authentication", c.scramConv.user))
	}
	return []byte(out), nil
}

// authenticate makes u the connection's user, its session recorded for
// Update; false if an Update removed u since the SaslHandshake.
func (c *conn) authenticate(u *User) bool {
	sess := newSession(c.raw.Close)
	if !c.s.cfg.sasl.register(u.Name, sess) {
		return false
	}
	c.sess = sess
	c.user, c.userState, c.scramConv, c.saslRaw = u, c.saslState, nil, false
	c.logger = c.logger.With("user", u.Name)
	c.logger.Debug("kafka client authenticated", "mechanism", c.saslMech)
	return true
}

// maxPreAuthBytes bounds a request before SASL authentication, and a bare
// SASL token (after SaslHandshake v0): the buffer every connection may
// keep (ioBufferSize), so that such a request takes none of the server's
// request memory (reserve), which clients without credentials could
// otherwise fill, a few hundred connections of them, for the frame
// timeout, and so close the connections of authenticated producers.
// Kafka's sasl.server.max.receive.size is 512 KiB, for GSSAPI's tokens;
// ApiVersions, PLAIN's and SCRAM's messages are a few hundred bytes.
const maxPreAuthBytes = ioBufferSize

// rawSASL takes a bare SASL token (SaslHandshake v0) and answers it with
// a bare frame, as Kafka does: an empty one where the mechanism has
// nothing to say (PLAIN's success). A refusal closes the connection
// without an answer (v0 has no way to say why).
func (c *conn) rawSASL(ctx context.Context, token []byte) error {
	out, err := c.saslStep(token)
	if err != nil {
		c.delayRefusal(ctx, err.authError)
		// The handshake's answer may wait in the buffer: the token came
		// in the same read, so it was not flushed.
		c.flush()
		return err.authError
	}
	c.out = binary.BigEndian.AppendUint32(c.out, uint32(len(out)))
	c.out = append(c.out, out...)
	return c.flush()
}

// errUserRemoved closes the connection of a user a reload removed.
var errUserRemoved = errors.New("the user was removed from broker.kafka_sasl by a reload")

// refreshUser gives an authenticated connection its user's rights
// (read_only, topics, groups) as the latest Update has them, as Kafka
// applies an ACL change to open sessions at once: a dashboard narrowed to
// some topics does not keep reading the others until it reconnects. A
// user the Update removed has no rights left: its connection is closed
// (errUserRemoved), and it cannot authenticate again. A changed password
// ends no session, as in Kafka.
func (c *conn) refreshUser() error {
	if c.user == nil {
		return nil
	}
	st := c.s.cfg.sasl.state()
	if st == c.userState {
		return nil
	}
	u := st.users[c.user.Name]
	if u == nil {
		return errUserRemoved
	}
	c.user, c.userState = u, st
	return nil
}
