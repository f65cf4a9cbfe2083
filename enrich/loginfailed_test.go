package enrich

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestFailedLoginIsAnEvent: a failed login's line is enriched with its
// user and source and raises a login_failed event about the user, of the
// line's severity. sshd's "Invalid user" line and its "Failed password"
// line of the same attempt name the same user, so within the
// de-duplication window they, and the user's next failure, are one
// event; another user's failure is another, and so is the same user's
// past the window.
func TestFailedLoginIsAnEvent(t *testing.T) {
	lines := []string{
		"<38>Mar  1 18:46:10 linux1 sshd[123]: Invalid user bob from 10.2.2.2 port 50000",
		"<38>Mar  1 18:46:11 linux1 sshd[123]: Failed password for invalid user bob from 10.2.2.2 port 50000 ssh2",
		"<38>Mar  1 18:46:12 linux1 sshd[123]: Failed password for invalid user bob from 10.2.2.2 port 50000 ssh2",
		"<38>Mar  1 18:46:13 linux1 sshd[124]: Failed password for root from 10.2.2.3 port 50001 ssh2",
	}
	enriched, evs := syslogLineRecords(t, time.Second, lines...)
	if len(enriched) != len(lines) {
		t.Fatalf("%d records enriched, want %d", len(enriched), len(lines))
	}
	for i, want := range []map[string]string{
		{"user": "bob", "source": "10.2.2.2"},
		{"user": "bob", "source": "10.2.2.2"},
		{"user": "bob", "source": "10.2.2.2"},
		{"user": "root", "source": "10.2.2.3"},
	} {
		if e := enriched[i]; e.Event != "login_failed" || e.Fields["user"] != want["user"] || e.Fields["source"] != want["source"] {
			t.Errorf("%s: enriched event %q, fields %v; want login_failed, %v", lines[i], e.Event, e.Fields, want)
		}
	}
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Type+" "+ev.Object+" "+ev.Severity)
	}
	// The lines' severity (<38>: informational), not the type's.
	want := []string{"login_failed bob informational", "login_failed root informational"}
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	if late := syslogLineEvents(t, time.Hour, lines[1], lines[2]); len(late) != 2 {
		t.Errorf("the same user's failures an hour apart: %d events, want 2", len(late))
	}
}

// TestFailedLoginWithoutUser: a failed login that names no user (IOS's
// "[user: ]") is about its source address, as a login naming none is.
func TestFailedLoginWithoutUser(t *testing.T) {
	evs := syslogLineEvents(t, time.Second,
		"<188>101: edge1: *Nov 29 14:00:00.000: %SEC_LOGIN-4-LOGIN_FAILED: Login failed [user: ] [Source: 172.16.0.22] [localport: 22] [Reason: Login Authentication Failed] at 14:00:00 UTC Sun Nov 29 2026")
	if len(evs) != 1 || evs[0].Type != "login_failed" || evs[0].Object != "172.16.0.22" || evs[0].Severity != "warning" {
		t.Errorf("events %+v, want one login_failed about 172.16.0.22, warning", evs)
	}
}

// TestFailedLoginTypeSeverity: a failed login's line without a PRI gives
// its event the type's severity, warning.
func TestFailedLoginTypeSeverity(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	tried, err := NewWorker(nil, inv, NewClassifier()).Try([]byte(`{"v":1,"device":"edge1","app_name":"sshd","message":"Failed password for bob from 10.0.0.1 port 22 ssh2"}`))
	if err != nil || tried.Event.Type != "login_failed" || tried.Event.Object != "bob" || tried.Event.Severity != "warning" {
		t.Errorf("%+v, %v; want a login_failed about bob, warning", tried.Event, err)
	}
}

// TestSiteRuleLoginFailed: a site rule may raise login_failed, naming its
// object by user or else source as login_succeeded does.
func TestSiteRuleLoginFailed(t *testing.T) {
	c := classifierWithRules(t, `
rules:
  - name: lab_login_failed
    match: '^lab: bad login (?:by (?P<user>\S+) )?from (?P<source>\S+)$'
    event: login_failed
    examples:
      - {line: "lab: bad login by eve from 10.9.9.9", event: login_failed, fields: {user: eve, source: 10.9.9.9}}
      - {line: "lab: bad login from 10.9.9.8", event: login_failed, fields: {source: 10.9.9.8}}
`)
	for msg, object := range map[string]string{"lab: bad login by eve from 10.9.9.9": "eve", "lab: bad login from 10.9.9.8": "10.9.9.8"} {
		l := telemetry.Log{Message: msg}
		if info := c.Classify(&l); info.Rule != "lab_login_failed" || info.Event != "login_failed" || ObjectOf(info) != object {
			t.Errorf("%q: %+v, object %q; want login_failed about %q", msg, info, ObjectOf(info), object)
		}
	}
	if _, err := ParseSyslogRules([]byte(`
rules:
  - name: a
    match: 'bad login (?P<who>\S+)'
    event: login_failed
    examples: [{line: "bad login eve", event: login_failed}]
`), "rules.yaml"); err == nil || !strings.Contains(err.Error(), "a login_failed event names its object by a (?P<user>...) group, or else a (?P<source>...) one") {
		t.Errorf("a login_failed rule naming no user or source: %v", err)
	}
}

// TestSshdLinesThatAreNoFailedLogin: a known user's "Failed publickey"
// (one of the keys a client offers before the accepted one), "Failed
// none" (a client asking for the methods) and a line naming a host, not
// an address, for its source.
func TestSshdLinesThatAreNoFailedLogin(t *testing.T) {
	c := NewClassifier()
	for _, tc := range []struct {
		msg, event string
		fields     map[string]string
	}{
		// fail2ban/fail2ban fail2ban/tests/files/logs/sshd (gh-1263).
		{"Failed publickey for git from 192.0.2.1 port 57904 ssh2: ECDSA 0e:ff:xx:xx:xx:xx:xx:xx:xx:xx:xx:xx:xx:xx:xx:xx", "", nil},
		// wazuh/wazuh ruleset/testing/tests/sshd.ini.
		{"[ID 800047 auth.notice] Failed none for root from 192.168.1.1 port 36942 ssh2", "", nil},
		{"Failed password for bob from host.example.com port 22 ssh2", "login_failed", map[string]string{"user": "bob", "source": ""}},
		{"Invalid user  from 10.1.1.1 port 22", "login_failed", map[string]string{"user": "", "source": "10.1.1.1"}},
	} {
		l := telemetry.Log{Message: tc.msg}
		info := c.Classify(&l)
		if info.Event != tc.event {
			t.Errorf("%q: event %q (rule %q), want %q", tc.msg, info.Event, info.Rule, tc.event)
		}
		for k, v := range tc.fields {
			if info.Fields[k] != v {
				t.Errorf("%q: field %s = %q, want %q", tc.msg, k, info.Fields[k], v)
			}
		}
	}
}

// TestSshdUserNameNamesNoSource: sshd writes the user name a client sent,
// spaces and all, before the address it came from, so a name such as "x
// from 10.9.9.9 port 1 ssh2" must not make 10.9.9.9 the source (a brute
// force blamed on another address): the address is the last "from"'s. A
// host name (sshd's UseDNS) is no source, and no part of one either,
// even one that begins with an address.
func TestSshdUserNameNamesNoSource(t *testing.T) {
	c := NewClassifier()
	for _, tc := range []struct {
		msg, event, user, source string
	}{
		{"Failed password for invalid user x from 10.9.9.9 port 1 ssh2 from 203.0.113.5 port 40000 ssh2", "login_failed", "x from 10.9.9.9 port 1 ssh2", "203.0.113.5"},
		{"Failed keyboard-interactive/pam for invalid user y from 10.9.9.9 from 2001:db8::5 port 40000 ssh2", "login_failed", "y from 10.9.9.9", "2001:db8::5"},
		{"Invalid user x from 10.9.9.9 port 1 from 203.0.113.5 port 40000", "login_failed", "x from 10.9.9.9 port 1", "203.0.113.5"},
		{"Failed password for invalid user x from 10.9.9.9 port 1 ssh2 from gw.example.com port 40000 ssh2", "login_failed", "x from 10.9.9.9 port 1 ssh2", ""},
		{"Accepted publickey for bob from host.example.com port 22 ssh2: ED25519 SHA256:abc", "login_succeeded", "bob", ""},
		{"Accepted password for bob from deadbeef.example.com port 22 ssh2", "login_succeeded", "bob", ""},
		// A host name beginning with another's address: its owner sets
		// the PTR record and the A record UseDNS checks it against.
		{"Failed password for bob from 10.9.9.9.example.com port 22 ssh2", "login_failed", "bob", ""},
		{"Failed password for invalid user x from 10.9.9.9-static.example.net port 40000 ssh2", "login_failed", "x", ""},
		{"Invalid user x from 10.9.9.9.example.com port 40000", "login_failed", "x", ""},
		{"Accepted password for bob from 10.9.9.9.example.com port 22 ssh2", "login_succeeded", "bob", ""},
		{"Accepted password for bob from 10.9.9.9-static.example.net port 22 ssh2", "login_succeeded", "bob", ""},
	} {
		l := telemetry.Log{Message: tc.msg}
		info := c.Classify(&l)
		if info.Event != tc.event || info.Fields["user"] != tc.user || info.Fields["source"] != tc.source {
			t.Errorf("%q: %s (rule %s), user %q, source %q; want %s, %q, %q", tc.msg, info.Event, info.Rule, info.Fields["user"], info.Fields["source"], tc.event, tc.user, tc.source)
		}
	}
}

// TestCiscoSSHFailedLoginIsNoLogin: IOS writes the user name an SSH
// client sent between quotes, quotes and all, so a name ending "...
// hmac 'b' Succeeded" must not make its failed attempt a login (nor its
// address the source): the outcome and the source are those IOS wrote
// last.
func TestCiscoSSHFailedLoginIsNoLogin(t *testing.T) {
	c := NewClassifier()
	const tail = "' authentication for SSH2 Session from 203.0.113.5 (tty = 1) using crypto cipher 'aes256-cbc', hmac 'hmac-sha1' Failed"
	for _, user := range []string{
		"x' authentication for SSH2 Session from 10.9.9.9 (tty = 1) using crypto cipher 'a', hmac 'b' Succeeded",
		"x' authentication for SSH2 Session from 10.9.9.9 (tty = 1) using crypto cipher 'a', hmac 'b' Succeeded\ny",
	} {
		l := telemetry.Log{Message: "%SSH-5-SSH2_USERAUTH: User '" + user + tail}
		info := c.Classify(&l)
		if info.Event != "login_failed" || info.Fields["user"] != user || info.Fields["source"] != "203.0.113.5" {
			t.Errorf("%q: %s (rule %s), user %q, source %q; want login_failed, the whole name, 203.0.113.5", l.Message, info.Event, info.Rule, info.Fields["user"], info.Fields["source"])
		}
	}
}

// TestFailedLoginUserNameNamesNoSource: IOS, IOS-XR and Junos write the
// name a client typed between brackets or quotes, which the name may
// hold too: the source is the one the device writes after it, the last.
func TestFailedLoginUserNameNamesNoSource(t *testing.T) {
	c := NewClassifier()
	for _, tc := range []struct{ msg, rule, user, source string }{
		{"%SEC_LOGIN-4-LOGIN_FAILED: Login failed [user: x] [Source: 10.9.9.9] [localport: 22] [Reason: Login Authentication Failed]] [Source: 203.0.113.5] [localport: 22] [Reason: Login Authentication Failed] at 20:55:40 UTC Mon Jul 25 2005",
			"cisco_login_failed", "x] [Source: 10.9.9.9] [localport: 22] [Reason: Login Authentication Failed]", "203.0.113.5"},
		{"%SECURITY-login-4-AUTHEN_FAILED: Failed authentication attempt by user 'x' from '10.9.9.9' on 'vty4' from '203.0.113.5' on 'vty4'",
			"iosxr_login_failed", "x' from '10.9.9.9' on 'vty4", "203.0.113.5"},
		{"SSHD_LOGIN_FAILED: Login failed for user 'x' from host '10.9.9.9'\n' from host '203.0.113.5'",
			"junos_sshd_login_failed", "x' from host '10.9.9.9'\n", "203.0.113.5"},
	} {
		l := telemetry.Log{Message: tc.msg}
		info := c.Classify(&l)
		if info.Rule != tc.rule || info.Fields["user"] != tc.user || info.Fields["source"] != tc.source {
			t.Errorf("%q: rule %s, user %q, source %q; want %s, %q, %q", tc.msg, info.Rule, info.Fields["user"], info.Fields["source"], tc.rule, tc.user, tc.source)
		}
	}
}

// TestJunosLoginFailedSource: login(1)'s line names the host as the
// client gave it: a name (ac1.example.com) is no source, nor the start of
// one, and a user name carrying " from host A" does not make A the source.
func TestJunosLoginFailedSource(t *testing.T) {
	c := NewClassifier()
	for _, tc := range []struct{ msg, user, source string }{
		{"LOGIN_FAILED: Login failed for user wow from host ac1.example.com", "wow", ""},
		{"LOGIN_FAILED: Login failed for user wow from host 10.9.9.9.example.com", "wow", ""},
		{"LOGIN_FAILED: Login failed for user x from host 10.9.9.9 from host 203.0.113.5", "x from host 10.9.9.9", "203.0.113.5"},
	} {
		checkFailedLogin(t, c, tc.msg, "", tc.user, tc.source)
	}
}

// TestFailedLoginSourceNotFromUserName: where a device writes the name
// the client sent before the address it came from, a name carrying the
// line's own wording and another address does not make that address the
// source: the source is the one the device wrote last.
func TestFailedLoginSourceNotFromUserName(t *testing.T) {
	c := NewClassifier()
	for _, tc := range []struct{ msg, user, source string }{
		{"%%10SHELL/5/SHELL_LOGINFAIL(l): SSH user x failed to log in from 10.9.9.9 on VTY0 failed to log in from 203.0.113.5 on VTY0.", "x failed to log in from 10.9.9.9 on VTY0", "203.0.113.5"},
		{"%%10SSHS/6/SSHS_AUTH_FAIL: SSH user x (IP: 10.9.9.9) didn't pass (IP: 203.0.113.5) didn't pass public key authentication for wrong public key.", "x (IP: 10.9.9.9) didn't pass", "203.0.113.5"},
		{"system,error,critical login failure for user x from 10.9.9.9 via ssh from 203.0.113.5 via ssh", "x from 10.9.9.9 via ssh", "203.0.113.5"},
		{"1,2020/04/14 16:48:54,unknown,SYSTEM,auth,0,2020/04/14 16:48:54,,auth-fail,,0,0,general,medium,failed authentication for user 'x'. From: 10.9.9.9'. Reason: Invalid username/password. From: 203.0.113.5.,1718,0x0,0,0,0,0,,paloalto", "x", "203.0.113.5"},
		// A comma in the message makes PAN-OS quote the CSV field: the
		// source is the last "From:" within the quotes.
		{`1,2020/04/14 16:48:54,unknown,SYSTEM,auth,0,2020/04/14 16:48:54,,auth-fail,,0,0,general,medium,"failed authentication for user 'x'. From: 10.9.9.9, y'. Reason: Invalid username/password. From: 203.0.113.5.",1718,0x0,0,0,0,0,,paloalto`, "x", "203.0.113.5"},
		{`1,2024/01/09 10:00:00,unknown,SYSTEM,auth,0,2024/01/09 10:00:00,,auth-fail,,0,0,general,medium,"failed authentication for user 'admin'. Reason: Invalid username/password. auth profile 'local', vsys 'shared', From: 10.0.10.55.",1718,0x0,0,0,0,0,,paloalto`, "admin", "10.0.10.55"},
	} {
		checkFailedLogin(t, c, tc.msg, "", tc.user, tc.source)
	}
}

// TestVendorFailedLoginLastAddressWins: VRP8's SSH_USER_LOGIN_FAIL,
// Comware 7's LOGIN_FAILED, AOS-CX's failed SSH and REST logins and PAM's
// authentication failure write what the client sent, commas, spaces and
// all, before the address the device saw: a name carrying the line's own
// wording and another address does not make that address the source, nor
// a failed attempt a login. The source is the one written last.
func TestVendorFailedLoginLastAddressWins(t *testing.T) {
	c := NewClassifier()
	for _, tc := range []struct{ msg, rule, user, source string }{
		{"%%01SSH/5/SSH_USER_LOGIN_FAIL(s):CID=0x80932723; The SSH user failed to login. (ServiceType=**, FailedReason=Client requested disconnection, UserName=x, IPAddress=10.9.9.9, VPNInstanceName=_public_.), IPAddress=203.0.113.5, VPNInstanceName=_public_.)",
			"huawei_ssh_user_login_fail", "x, IPAddress=10.9.9.9, VPNInstanceName=_public_.)", "203.0.113.5"},
		{"SSH/5/SSH_USER_LOGIN_FAIL:The SSH user failed to login. (ServiceType=stelnet, FailedReason=Authentication failed, UserName=x, UserAddress=10.9.9.9, LocalAddress=10.1.0.1, VPNInstanceName=_public_, UserAddress=203.0.113.5, LocalAddress=10.1.0.1, VPNInstanceName=_public_)",
			"huawei_ssh_user_login_fail", "x, UserAddress=10.9.9.9, LocalAddress=10.1.0.1, VPNInstanceName=_public_", "203.0.113.5"},
		{"%%10LOGIN/5/LOGIN_FAILED: -DevIP=192.168.1.254; x failed to log in from 10.9.9.9 failed to log in from 203.0.113.5.",
			"comware_login_failed7", "x failed to log in from 10.9.9.9", "203.0.113.5"},
		{"Event|5210|LOG_ERR|CDTR|1|User x login from 10.9.9.9 for SSH session failed during password based authentication. login from 203.0.113.5 for SSH session failed during password based authentication.",
			"aoscx_login_failed", "x login from 10.9.9.9 for SSH session failed during password based authentication.", "203.0.113.5"},
		// A failed attempt whose name reads as the login's line.
		{"Event|5210|LOG_ERR|CDTR|1|User x logged in from 10.9.9.9 through SSH session. login from 203.0.113.5 for SSH session failed during password based authentication.",
			"aoscx_login_failed", "x logged in from 10.9.9.9 through SSH session.", "203.0.113.5"},
		{"pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser=x rhost=10.9.9.9 rhost=203.0.113.5  user=root",
			"pam_auth_failure", "root", "203.0.113.5"},
		// A host name that begins with an address is no source.
		{"pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=10.9.9.9.example.com user=root",
			"pam_auth_failure", "root", ""},
	} {
		checkFailedLogin(t, c, tc.msg, tc.rule, tc.user, tc.source)
	}
}

// checkFailedLogin checks that c makes a login_failed of msg about user
// from source, by rule (any rule when "").
func checkFailedLogin(t *testing.T, c *Classifier, msg, rule, user, source string) {
	t.Helper()
	l := telemetry.Log{Message: msg}
	info := c.Classify(&l)
	if rule != "" && info.Rule != rule || info.Event != "login_failed" || info.Fields["user"] != user || info.Fields["source"] != source {
		t.Errorf("%q: %s (rule %s), user %q, source %q; want login_failed (rule %q), %q, %q", msg, info.Event, info.Rule, info.Fields["user"], info.Fields["source"], rule, user, source)
	}
}

// TestVendorLoginLinesKeepTheirOutcome: the same vendors' logins stay
// logins and their failures failures, and their lines that are neither
// (logouts, a REST authentication naming no address, sudo's failed
// password, PAM's count of an attempt's further failures, a failure
// naming no user) raise no login event.
func TestVendorLoginLinesKeepTheirOutcome(t *testing.T) {
	c := NewClassifier()
	for _, tc := range []struct{ msg, event string }{
		// elastic/integrations packages/hpe_aruba_cx/_dev/deploy/docker/sample_logs/{6300,8360}.log.
		{"Event|5209|LOG_INFO|CDTR|1|User satori logged in from 10.14.16.13 through SSH session.", "login_succeeded"},
		{"Event|5211|LOG_INFO|CDTR|1|User oxidized logged out of SSH session from 10.14.16.17.", ""},
		{"Event|4657|LOG_INFO|AMM|-|User admin logged out of REST session from 10.14.16.13", ""},
		{"Event|4601|LOG_ERR|AMM|-|Authentication failed for user satori in session -mSmC5uACO4fdv2rfIWQ9g==", ""},
		{"Event|4656|LOG_ERR|AMM|-|User satori login from 10.14.16.13 for REST session has failed", "login_failed"},
		{"SSH/5/SSH_USER_LOGIN:The SSH user succeeded in logging in. (ServiceType=stelnet, UserName=admin, UserAddress=10.1.0.5, LocalAddress=10.1.0.1, VPNInstanceName=_public_)", "login_succeeded"},
		{"%%01SSH/5/SSH_USER_LOGIN_FAIL(s):CID=0x80932723; The SSH user failed to login. (ServiceType=**, FailedReason=Client requested disconnection, UserName=u2000test, IPAddress=22.22.23.23, VPNInstanceName=_public_.)", "login_failed"},
		{"%%10SHELL/5/SHELL_LOGIN: admin logged in from 10.0.0.5.", "login_succeeded"},
		{"%%10LOGIN/5/LOGIN_FAILED: -DevIP=192.168.1.254; rule 15 deny ip source 192.168.1.24 0 destination any failed to log in from 192.168.5.182.", "login_failed"},
		// elastic/integrations packages/system/data_stream/auth/_dev/test/pipeline/
		// test-pam-extraction.log and test-secure-rhel7.log.
		{"pam_unix(sudo:auth): authentication failure; logname=jsmith uid=1001 euid=0 tty=/dev/pts/0 ruser=jsmith rhost=  user=jsmith", ""},
		{"PAM 4 more authentication failures; logname= uid=0 euid=0 tty=ssh ruser= rhost=202.109.143.106  user=root", ""},
		{"pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=192.168.1.100", ""},
		{"pam_unix(sshd:session): session opened for user admin(uid=1000) by admin(uid=0)", "login_succeeded"},
	} {
		l := telemetry.Log{Message: tc.msg}
		info := c.Classify(&l)
		if info.Event != tc.event {
			t.Errorf("%q: event %q (rule %q), want %q", tc.msg, info.Event, info.Rule, tc.event)
		}
	}
}

// TestFailedLoginNXOSAndPAM: NX-OS's failed logins are events. Its AAA
// PAM module logs "pam_aaa:Authentication failed from A" (MDS and Nexus,
// with or without "for user U"), for SSH and the console alike, and for
// SSH sshd's own PAM error, "error: PAM: Authentication failure for
// [illegal user ]U from A", which OpenSSH writes on Linux hosts too (there
// beside "Failed password" of the same attempt: one user, one event).
func TestFailedLoginNXOSAndPAM(t *testing.T) {
	for _, c := range []struct {
		line, user, source, object string
	}{
		// A SAN switch's show logging (NX-OS on MDS).
		{"<187>2026 May 19 17:00:17 nx1 %AUTHPRIV-3-SYSTEM_MSG: pam_aaa:Authentication failed from 172.18.8.191 - sshd[21938]", "", "172.18.8.191", "172.18.8.191"},
		{"<187>2026 Apr 15 15:47:57 nx1 %AUTHPRIV-3-SYSTEM_MSG: pam_aaa:Authentication failed from console - login", "", "console", "console"},
		{"<187>: 2019 Apr 18 10:57:54 UTC: %AUTHPRIV-3-SYSTEM_MSG: pam_aaa:Authentication failed from 119.29.170.202 - dcos_sshd[14361]", "", "119.29.170.202", "119.29.170.202"},
		{"<187>2026 Apr 18 10:57:54 nx1 %AUTHPRIV-3-SYSTEM_MSG: pam_aaa:Authentication failed for user admin from 10.1.1.1 - dcos_sshd[14361]", "admin", "10.1.1.1", "admin"},
		// A Nexus's (Mastering Python Networking's sample log).
		{"<187>2016 Jun 5 16:49:33 NEXUS-A %DAEMON-3-SYSTEM_MSG: error: PAM: Authentication failure for illegal user AAA from 172.16.20.170 - sshd[4425]", "AAA", "172.16.20.170", "AAA"},
		{"<187>2016 Jun 5 16:49:33 NEXUS-A %DAEMON-3-SYSTEM_MSG: error: PAM: Authentication failure for admin from 2001:db8::5 - dcos_sshd[4425]", "admin", "2001:db8::5", "admin"},
		{"<38>Mar  1 18:46:10 linux1 sshd[123]: error: PAM: Authentication failure for root from 10.2.2.3", "root", "10.2.2.3", "root"},
	} {
		enriched, evs := syslogLineRecords(t, time.Second, c.line)
		if len(enriched) != 1 || enriched[0].Event != "login_failed" || enriched[0].Fields["user"] != c.user || enriched[0].Fields["source"] != c.source {
			t.Errorf("%s: enriched %+v, want login_failed with user %q, source %q", c.line, enriched, c.user, c.source)
			continue
		}
		if len(evs) != 1 || evs[0].Type != "login_failed" || evs[0].Object != c.object {
			t.Errorf("%s: events %+v, want one login_failed about %q", c.line, evs, c.object)
		}
	}
	// sshd's PAM error and its Failed line of one attempt: one event.
	evs := syslogLineEvents(t, time.Second,
		"<38>Mar  1 18:46:10 linux1 sshd[123]: error: PAM: Authentication failure for root from 10.2.2.3",
		"<38>Mar  1 18:46:10 linux1 sshd[123]: Failed password for root from 10.2.2.3 port 50001 ssh2")
	if len(evs) != 1 || evs[0].Object != "root" {
		t.Errorf("one attempt's two lines: events %+v, want one login_failed about root", evs)
	}
}
