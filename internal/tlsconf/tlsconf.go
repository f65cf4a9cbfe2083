// Package tlsconf builds crypto/tls configurations from the PEM files a
// config names. weir's TLS clients (the Kafka backend, the Kafka and HTTP
// sinks, gNMI) and servers (syslog over TLS) read their files here, and
// `weir check` reads them the same way, so a missing or wrong file fails
// the check and not the next start.
package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// Client is a TLS client's settings, as a config gives them.
type Client struct {
	// CAFile holds the PEM certificates that verify the server; empty:
	// the system's roots.
	CAFile string
	// CertFile and KeyFile are a client certificate and its key (mutual
	// TLS); both or neither.
	CertFile, KeyFile string
	// ServerName overrides the name the server's certificate is checked
	// against (the dialled host by default).
	ServerName string
	// InsecureSkipVerify accepts any server certificate.
	InsecureSkipVerify bool
}

// IsZero reports whether c sets nothing, so a plain connection or the
// default TLS settings apply.
func (c Client) IsZero() bool { return c == Client{} }

// Config reads c's files into a client configuration (TLS 1.2 at least).
func (c Client) Config() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName, InsecureSkipVerify: c.InsecureSkipVerify}
	if c.CAFile != "" {
		pool, err := certPool(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("tls ca_file: %w", err)
		}
		tc.RootCAs = pool
	}
	if c.CertFile != "" || c.KeyFile != "" {
		cert, err := keyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, err
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// Server reads a server's certificate and key, and clientCAFile, when
// set, to require client certificates signed by one of its CAs.
func Server(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	cert, err := keyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAFile != "" {
		pool, err := certPool(clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("tls client_ca_file: %w", err)
		}
		tc.ClientCAs, tc.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return tc, nil
}

// ServerReloading is Server for a listener that runs for months: its
// files are read again when they change (a renewed certificate, a CA
// added), so a handshake after the change gets the new ones without a
// restart. Each handshake compares the files' stamps (size, modification
// time, mode, inode, change time: fileStamp) with the last read's (three
// stats: small beside the handshake). A set that does not load (a key
// written before its certificate, a file half written, one weir may not
// read until its mode or owner is fixed) leaves the last good one in use and is passed to onError
// (once per change of the files), if it is not nil.
//
// It sends no session tickets. A TLS 1.3 server sends them after the
// handshake, and a client that only writes (a syslog sender) leaves them
// unread; closing a socket with unread data resets the connection at once,
// and the kernel throws away what the client had not sent yet (a last
// write held back by Nagle's algorithm): a script that sends one line and
// closes lost it every time.
func ServerReloading(certFile, keyFile, clientCAFile string, onError func(error)) (*tls.Config, error) {
	r, err := newReloader(certFile, keyFile, clientCAFile, onError)
	if err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, GetConfigForClient: r.config, SessionTicketsDisabled: true}, nil
}

func newReloader(certFile, keyFile, clientCAFile string, onError func(error)) (*reloader, error) {
	r := &reloader{files: [3]string{certFile, keyFile, clientCAFile}, onError: onError}
	r.stamps = r.stat()
	cfg, err := r.load()
	if err != nil {
		return nil, err
	}
	r.cfg = cfg
	return r, nil
}

// load reads the files into the configuration a handshake gets: without
// session tickets (see ServerReloading).
func (r *reloader) load() (*tls.Config, error) {
	cfg, err := Server(r.files[0], r.files[1], r.files[2])
	if err != nil {
		return nil, err
	}
	cfg.SessionTicketsDisabled = true
	return cfg, nil
}

// reloader holds a server's configuration and the stamps of the files it
// was read from.
type reloader struct {
	files   [3]string // cert, key, client CA ("" for none)
	onError func(error)

	mu     sync.Mutex
	cfg    *tls.Config
	stamps [3]fileStamp // of cfg's files
	failed [3]fileStamp // of the files that last failed to load
}

// fileStamp is what stat tells of a file. Size and modification time
// alone miss a file made readable after it failed to load (a chmod or
// chown changes neither): the mode, and where the system gives them the
// inode and the change time, which a chown, an ACL or a rename over the
// file moves, tell it.
type fileStamp struct {
	size    int64
	modTime time.Time
	mode    os.FileMode
	sys     sysStamp
	missing bool
}

func (r *reloader) stat() [3]fileStamp {
	var st [3]fileStamp
	for i, f := range r.files {
		if f == "" {
			continue
		}
		if fi, err := os.Stat(f); err != nil {
			st[i].missing = true
		} else {
			st[i] = fileStamp{size: fi.Size(), modTime: fi.ModTime(), mode: fi.Mode(), sys: sysStampOf(fi)}
		}
	}
	return st
}

// config is the configuration for a handshake: read again if the files
// changed since.
func (r *reloader) config(*tls.ClientHelloInfo) (*tls.Config, error) {
	st := r.stat()
	r.mu.Lock()
	defer r.mu.Unlock()
	if st == r.stamps || st == r.failed {
		return r.cfg, nil
	}
	cfg, err := r.load()
	if err != nil {
		r.failed = st
		if r.onError != nil {
			r.onError(err)
		}
		return r.cfg, nil
	}
	r.cfg, r.stamps, r.failed = cfg, st, [3]fileStamp{}
	return cfg, nil
}

func keyPair(certFile, keyFile string) (tls.Certificate, error) {
	if certFile == "" || keyFile == "" {
		return tls.Certificate{}, errors.New("tls: cert_file and key_file go together")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tls cert_file %s, key_file %s: %w", certFile, keyFile, err)
	}
	return cert, nil
}

func certPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", file)
	}
	return pool, nil
}
