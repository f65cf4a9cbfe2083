package snmpv3

import (
	"testing"

	"github.com/gosnmp/gosnmp"

	"github.com/weirnet/weir/configs"
)

func TestUSM(t *testing.T) {
	for _, c := range []struct {
		cfg   configs.SNMPv3
		flags gosnmp.SnmpV3MsgFlags
		auth  gosnmp.SnmpV3AuthProtocol
		priv  gosnmp.SnmpV3PrivProtocol
	}{
		{configs.SNMPv3{User: "u", SecurityLevel: "noAuthNoPriv"}, gosnmp.NoAuthNoPriv, gosnmp.NoAuth, gosnmp.NoPriv},
		// SHA and AES when the level asks for them and no protocol is named.
		{configs.SNMPv3{User: "u", SecurityLevel: "authNoPriv", AuthPassword: "a"}, gosnmp.AuthNoPriv, gosnmp.SHA, gosnmp.NoPriv},
		{configs.SNMPv3{User: "u", SecurityLevel: "authPriv", AuthProtocol: "sha256", AuthPassword: "a", PrivProtocol: "aes256c", PrivPassword: "p"}, gosnmp.AuthPriv, gosnmp.SHA256, gosnmp.AES256C},
		{configs.SNMPv3{User: "u", SecurityLevel: "authPriv", AuthProtocol: "MD5", AuthPassword: "a", PrivProtocol: "DES", PrivPassword: "p"}, gosnmp.AuthPriv, gosnmp.MD5, gosnmp.DES},
	} {
		usm, flags, err := USM(c.cfg)
		if err != nil {
			t.Fatalf("%+v: %v", c.cfg, err)
		}
		if flags != c.flags || usm.AuthenticationProtocol != c.auth || usm.PrivacyProtocol != c.priv || usm.UserName != "u" {
			t.Errorf("%+v: flags %v auth %v priv %v", c.cfg, flags, usm.AuthenticationProtocol, usm.PrivacyProtocol)
		}
		if c.flags == gosnmp.AuthPriv && (usm.AuthenticationPassphrase != "a" || usm.PrivacyPassphrase != "p") {
			t.Errorf("%+v: passphrases not passed on", c.cfg)
		}
	}
	for _, bad := range []configs.SNMPv3{
		{User: "u", SecurityLevel: "authNoPriv", AuthProtocol: "SHA3"},
		{User: "u", SecurityLevel: "authPriv", PrivProtocol: "3DES"},
	} {
		if _, _, err := USM(bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
