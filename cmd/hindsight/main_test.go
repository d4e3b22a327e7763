package main

import (
	"flag"
	"slices"
	"testing"
)

func TestInterspersedFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	format := fs.String("format", "table", "")
	asJSON := fs.Bool("json", false, "")
	if err := fs.Parse(interspersed(fs, []string{"SELECT", "-1", "--format", "tsv", "--json", "FROM t", "--", "--not-a-flag"})); err != nil {
		t.Fatal(err)
	}
	if *format != "tsv" || !*asJSON || !slices.Equal(fs.Args(), []string{"SELECT", "-1", "FROM t", "--not-a-flag"}) {
		t.Fatalf("format=%q json=%v args=%q", *format, *asJSON, fs.Args())
	}
}

func TestCheckListen(t *testing.T) {
	for _, tt := range []struct {
		addr, tokens string
		ok           bool
	}{
		{"127.0.0.1:8765", "", true},
		{"localhost:8765", "", true},
		{"[::1]:8765", "", true},
		{"0.0.0.0:8765", "", false},
		{":8765", "", false},
		{"10.0.0.5:8765", "", false},
		{"0.0.0.0:8765", "tokens.txt", true},
	} {
		if err := checkListen(tt.addr, tt.tokens); (err == nil) != tt.ok {
			t.Errorf("checkListen(%q, %q) = %v, want ok=%v", tt.addr, tt.tokens, err, tt.ok)
		}
	}
}
