package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
)

// outputFormat is the --output (-o) of the commands that describe the
// broker's state: a table for people, or JSON for scripts (jq), whose
// fields do not move when a column is added.
type outputFormat string

const (
	outputTable outputFormat = "table"
	outputJSON  outputFormat = "json"
)

func (o *outputFormat) String() string { return string(*o) }

func (o *outputFormat) Set(v string) error {
	switch outputFormat(v) {
	case outputTable, outputJSON:
		*o = outputFormat(v)
		return nil
	}
	return fmt.Errorf("%q is not an output format: use table or json", v)
}

// register adds --output and its short form -o to fs.
func (o *outputFormat) register(fs *flag.FlagSet) {
	*o = outputTable
	fs.Var(o, "output", "output format: table or json (one JSON document)")
	fs.Var(o, "o", "short for --output")
}

// writeJSON writes v as one indented JSON document and a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
