package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/enrich"
)

// checkCmd validates a config file without starting anything.
func checkCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weir check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("c", "configs/weir.yaml", "config file to check")
	fs.StringVar(file, "config", "configs/weir.yaml", "config file to check")
	skipFiles := fs.Bool("skip-files", false, "do not read the files the config names (the inventory): for a config meant for another machine or a container")
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	cfg, err := configs.Load(*file)
	if err != nil {
		return &exitError{1, err}
	}
	// The inventory is read as weir run reads it, so a broken one fails
	// here and not at the next start or SIGHUP.
	if inv := cfg.Enrich.Inventory; inv != "" && cfg.EnrichEnabled() && !*skipFiles {
		if _, err := enrich.LoadInventory(inv, slog.New(slog.DiscardHandler)); err != nil {
			return &exitError{1, fmt.Errorf("%s: enrich.inventory: %w", *file, err)}
		}
	}
	// On a Kafka cluster the embedded log and its listener do not run.
	log := fmt.Sprintf("data_dir %s, kafka %s", cfg.DataDir, cfg.Broker.KafkaListen)
	if k := cfg.Broker.Kafka; len(k.Brokers) > 0 {
		log = "kafka cluster " + strings.Join(k.Brokers, ",")
	}
	fmt.Fprintf(stdout, "%s: ok (%s, http %s, %d topic overrides)\n", *file, log, cfg.HTTP.Listen, len(cfg.Broker.Topics))
	return nil
}
