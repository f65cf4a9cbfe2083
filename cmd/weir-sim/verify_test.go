package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// TestVerifyWithSASL: --verify-brokers reads back through a listener that
// wants SASL (weir's broker.kafka_sasl), with the --verify-sasl-* flags
// and $WEIR_SASL_PASSWORD, as weir's client commands take them; a soak
// against a secured weir could not be checked before. A wrong password
// fails, saying so, rather than counting nothing as all lost.
func TestVerifyWithSASL(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "raw.syslog"),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "admin", "s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("raw.syslog"),
		kgo.SASL(scram.Auth{User: "admin", Pass: "s3cret"}.AsSha512Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range 20 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, `{"raw":"hello seq=r1-%d"}`, i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	vf := verifyFlags{mechanism: "SCRAM-SHA-512", username: "admin"}
	t.Setenv("WEIR_SASL_PASSWORD", "s3cret")
	src, err := vf.source(addr)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := countRun(ctx, src, "raw.syslog", "r1", nil, 20, 3*time.Second); err != nil || got != 20 {
		t.Errorf("counted %d of 20 through SASL: %v", got, err)
	}
	t.Setenv("WEIR_SASL_PASSWORD", "wrong")
	if src, err = vf.source(addr); err != nil {
		t.Fatal(err)
	}
	if _, err := listOffsets(ctx, src, "raw.syslog", false); err == nil {
		t.Error("a wrong password listed offsets")
	} else {
		t.Logf("wrong password: %v", err)
	}
	if _, err := (&verifyFlags{mechanism: "SCRAM-SHA-1"}).source(addr); err == nil {
		t.Error("an unknown mechanism was taken")
	}
}
