// Package snmpv3 maps weir's SNMPv3 user configuration to gosnmp's, for
// every part that speaks v3: the poller, the trap receiver and weir-sim.
package snmpv3

import (
	"fmt"
	"strings"

	"github.com/gosnmp/gosnmp"

	"github.com/weirnet/weir/configs"
)

// USM maps a configured v3 user to gosnmp's security parameters: a
// poller's user (collectors/snmp), a trap receiver's (collectors/trap) and
// weir-sim's agents' alike.
func USM(v configs.SNMPv3) (*gosnmp.UsmSecurityParameters, gosnmp.SnmpV3MsgFlags, error) {
	usm := &gosnmp.UsmSecurityParameters{
		UserName:               v.User,
		AuthenticationProtocol: gosnmp.NoAuth,
		PrivacyProtocol:        gosnmp.NoPriv,
	}
	flags := gosnmp.NoAuthNoPriv
	if v.SecurityLevel == "authNoPriv" || v.SecurityLevel == "authPriv" {
		flags = gosnmp.AuthNoPriv
		usm.AuthenticationPassphrase = v.AuthPassword
		switch strings.ToUpper(v.AuthProtocol) {
		case "MD5":
			usm.AuthenticationProtocol = gosnmp.MD5
		case "SHA", "":
			usm.AuthenticationProtocol = gosnmp.SHA
		case "SHA224":
			usm.AuthenticationProtocol = gosnmp.SHA224
		case "SHA256":
			usm.AuthenticationProtocol = gosnmp.SHA256
		case "SHA384":
			usm.AuthenticationProtocol = gosnmp.SHA384
		case "SHA512":
			usm.AuthenticationProtocol = gosnmp.SHA512
		default:
			return nil, 0, fmt.Errorf("unknown auth protocol %q", v.AuthProtocol)
		}
	}
	if v.SecurityLevel == "authPriv" {
		flags = gosnmp.AuthPriv
		usm.PrivacyPassphrase = v.PrivPassword
		switch strings.ToUpper(v.PrivProtocol) {
		case "DES":
			usm.PrivacyProtocol = gosnmp.DES
		case "AES", "":
			usm.PrivacyProtocol = gosnmp.AES
		case "AES192":
			usm.PrivacyProtocol = gosnmp.AES192
		case "AES256":
			usm.PrivacyProtocol = gosnmp.AES256
		case "AES192C":
			usm.PrivacyProtocol = gosnmp.AES192C
		case "AES256C":
			usm.PrivacyProtocol = gosnmp.AES256C
		default:
			return nil, 0, fmt.Errorf("unknown priv protocol %q", v.PrivProtocol)
		}
	}
	return usm, flags, nil
}
