package main

import (
	"flag"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// clientFlags are the flags every Kafka client command shares.
type clientFlags struct {
	brokers string
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	def := os.Getenv("WEIR_BROKERS")
	if def == "" {
		def = "127.0.0.1:9092"
	}
	fs.StringVar(&c.brokers, "brokers", def, "Kafka bootstrap servers, comma separated ($WEIR_BROKERS)")
	fs.StringVar(&c.brokers, "b", def, "shorthand for --brokers")
}

func (c *clientFlags) client(opts ...kgo.Opt) (*kgo.Client, error) {
	opts = append([]kgo.Opt{
		kgo.SeedBrokers(strings.Split(c.brokers, ",")...),
		kgo.ClientID("weir-cli"),
	}, opts...)
	return kgo.NewClient(opts...)
}

func (c *clientFlags) admin() (*kadm.Client, *kgo.Client, error) {
	cl, err := c.client()
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl, nil
}
