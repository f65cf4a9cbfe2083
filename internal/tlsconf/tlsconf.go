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
