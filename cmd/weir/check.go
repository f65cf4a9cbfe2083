package main

import (
	"flag"
	"fmt"
	"io"

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
	fmt.Fprintf(stdout, "%s: ok (data_dir %s, kafka %s, http %s, %d topic overrides)\n",
		*file, cfg.DataDir, cfg.Broker.KafkaListen, cfg.HTTP.Listen, len(cfg.Broker.Topics))
	return nil
}
