package main

import (
	"context"
	"encoding/json"
	"os"
	"testing"
)

// TestMain lets a test run the hindsight binary as a child process: the
// test binary re-executes itself with HINDSIGHT_TEST_ARGS set to the
// command line (JSON), and runs it instead of the tests.
func TestMain(m *testing.M) {
	if raw := os.Getenv("HINDSIGHT_TEST_ARGS"); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			panic(err)
		}
		os.Exit(run(context.Background(), args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
