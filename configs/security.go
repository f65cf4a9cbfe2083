package configs

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
)

// SecurityWarnings names the settings that weaken a connection's security
// on purpose or by omission: certificate checks turned off, a password
// sent in the clear. They are valid (a lab, a test) but must not pass
// unseen: weir check prints them and weir run logs them at start.
func (c *Config) SecurityWarnings() []string {
	out := c.Broker.listenerWarnings()
	if k := c.Broker.Kafka; len(k.Brokers) > 0 {
		out = append(out, kafkaWarnings("broker.kafka", k.TLS != nil, k.TLS != nil && k.TLS.InsecureSkipVerify, k.SASL)...)
	}
	for _, s := range c.Sinks {
		where := fmt.Sprintf("sink %q", s.Name)
		switch s.Type {
		case "kafka":
			var sc *SASL
			if s.SASL.Mechanism != "" {
				sc = &s.SASL
			}
			on := s.TLS.Enabled || !s.TLS.Client().IsZero()
			out = append(out, kafkaWarnings(where, on, s.TLS.InsecureSkipVerify, sc)...)
		case "influxdb", "prometheus_remote_write", "webhook":
			if s.TLS.InsecureSkipVerify && strings.HasPrefix(s.URL, "https:") {
				out = append(out, where+": tls.insecure_skip_verify: the server's certificate is not checked, so anyone on the way can read the records and credentials sent, and change them")
			}
			if what := httpCredentials(s); what != "" && strings.HasPrefix(strings.ToLower(s.URL), "http:") {
				out = append(out, where+": an http:// url sends the "+what+" in the clear with every request: use https://")
			}
		}
	}
	for _, t := range c.GNMI.Targets {
		where := fmt.Sprintf("gnmi target %q", t.Name)
		switch {
		case t.Insecure && t.Password != "":
			out = append(out, where+": insecure: true sends the password in the clear with every call")
		case !t.Insecure && t.TLS != nil && t.TLS.Unverified():
			out = append(out, where+": tls.insecure_skip_verify: the target's certificate is not checked, so anyone on the way can read the data and the password, and change them")
		}
	}
	return out
}

// httpCredentials names the credentials an HTTP sink sends, "" for none.
func httpCredentials(s Sink) string {
	switch {
	case s.Token != "":
		return "token"
	case s.Password != "":
		return "password"
	case strings.Contains(s.URL, "@"):
		return "user and password of the url"
	}
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") || strings.Contains(strings.ToLower(k), "token") || strings.Contains(strings.ToLower(k), "key") {
			return k + " header"
		}
	}
	return ""
}

func kafkaWarnings(where string, tlsOn, skipVerify bool, sc *SASL) []string {
	var out []string
	if skipVerify {
		out = append(out, where+": tls.insecure_skip_verify: the brokers' certificates are not checked, so anyone on the way can read the records and SASL credentials, and change them")
	}
	if sc != nil && sc.Mechanism == "PLAIN" && !tlsOn {
		out = append(out, where+": sasl mechanism PLAIN without tls sends the password in the clear")
	}
	return out
}

// validateListenerSecurity checks kafka_tls and kafka_sasl.
func (b *Broker) validateListenerSecurity(add func(path, format string, args ...any)) {
	if b.KafkaTLS == nil && b.KafkaSASL == nil {
		return
	}
	// A block that would be ignored leaves the listener less secured
	// than its operator thinks, or there being none unnoticed.
	switch {
	case len(b.Kafka.Brokers) > 0:
		add("broker.kafka_tls", "kafka_tls and kafka_sasl secure the embedded broker's Kafka listener, which does not run with broker.kafka (clients use the cluster)")
	case !b.KafkaListen.Enabled():
		add("broker.kafka_listen", "is off: kafka_tls and kafka_sasl secure the Kafka listener")
	}
	if t := b.KafkaTLS; t != nil && (t.CertFile == "" || t.KeyFile == "") {
		add("broker.kafka_tls", "needs cert_file and key_file")
	}
	if s := b.KafkaSASL; s != nil {
		if len(s.Mechanisms) == 0 {
			add("broker.kafka_sasl.mechanisms", "is required: one or more of %s", saslMechanisms)
		}
		seen := map[string]bool{}
		for i, m := range s.Mechanisms {
			switch m {
			case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
			default:
				add(fmt.Sprintf("broker.kafka_sasl.mechanisms[%d]", i), "must be %s, not %q", saslMechanisms, m)
			}
			if seen[m] {
				add(fmt.Sprintf("broker.kafka_sasl.mechanisms[%d]", i), "%s is listed twice", m)
			}
			seen[m] = true
		}
		if len(s.Users) == 0 {
			add("broker.kafka_sasl.users", "is required: without users no client can authenticate")
		}
		names := map[string]bool{}
		for i, u := range s.Users {
			path := fmt.Sprintf("broker.kafka_sasl.users[%d]", i)
			switch {
			case u.Name == "":
				add(path+".name", "is required")
			case names[u.Name]:
				add(path+".name", "%q is listed twice", u.Name)
			}
			names[u.Name] = true
			// An empty password is an unset environment variable
			// with a default of nothing, most likely; and a user
			// anyone can be.
			if u.Password == "" {
				add(path+".password", "is required (write it as ${ENV_VAR} to keep it out of the file)")
			}
			for k, patterns := range [][]string{u.Topics, u.Groups} {
				key := [...]string{"topics", "groups"}[k]
				for j, p := range patterns {
					if p == "" || strings.Contains(strings.TrimSuffix(p, "*"), "*") {
						add(fmt.Sprintf("%s.%s[%d]", path, key, j), "%q must be a name, or a prefix ending in * (enriched.*), or * for all", p)
					}
				}
			}
		}
	}
}

// listenerWarnings are the Kafka listener's: PLAIN without TLS, and a
// listener other hosts reach without authentication (neither SASL nor
// client certificates).
func (b *Broker) listenerWarnings() []string {
	if len(b.Kafka.Brokers) > 0 || !b.KafkaListen.Enabled() {
		return nil
	}
	var out []string
	if s := b.KafkaSASL; s != nil && b.KafkaTLS == nil && slices.Contains(s.Mechanisms, "PLAIN") {
		out = append(out, "broker.kafka_sasl: mechanism PLAIN without broker.kafka_tls: Kafka clients send their password in the clear")
	}
	mutualTLS := b.KafkaTLS != nil && b.KafkaTLS.ClientCAFile != ""
	if b.KafkaSASL == nil && !mutualTLS && !loopback(string(b.KafkaListen)) {
		out = append(out, fmt.Sprintf("broker.kafka_listen %s is reachable from other hosts without authentication: anyone who can connect may produce, delete topics, change retention and commit offsets; set broker.kafka_sasl (and kafka_tls), or kafka_tls.client_ca_file, or listen on 127.0.0.1", b.KafkaListen))
	}
	return out
}

// loopback reports whether a listen address only takes connections from
// this host: a loopback IP or localhost.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
