package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/weirnet/weir/configs"
)

// checkCmd validates a config file without starting anything.
func checkCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weir check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("c", "configs/weir.yaml", "config file to check")
	fs.StringVar(file, "config", "configs/weir.yaml", "config file to check")
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	cfg, err := configs.Load(*file)
	if err != nil {
		return &exitError{1, err}
	}
	// On a Kafka cluster the embedded log and its listener do not run.
	log := fmt.Sprintf("data_dir %s, kafka %s", cfg.DataDir, cfg.Broker.KafkaListen)
	if k := cfg.Broker.Kafka; len(k.Brokers) > 0 {
		log = "kafka cluster " + strings.Join(k.Brokers, ",")
	}
	fmt.Fprintf(stdout, "%s: ok (%s, http %s, %d topic overrides)\n", *file, log, cfg.HTTP.Listen, len(cfg.Broker.Topics))
	return nil
}
