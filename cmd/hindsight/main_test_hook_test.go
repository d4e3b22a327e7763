package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/hindsight-memory/hindsight/activities"
)

// TestMain lets a test run the hindsight binary as a child process: the
// test binary re-executes itself with HINDSIGHT_TEST_ARGS set to the
// command line (JSON), and runs it instead of the tests.
//
// With HINDSIGHT_TEST_CONSOLIDATE_BLOCK=N as well, the child prints
// "consolidating TASK_TYPE CLUSTER" as each cluster's consolidation starts
// and, at the N-th (from 1; 0 never), blocks until it is killed.
func TestMain(m *testing.M) {
	if raw := os.Getenv("HINDSIGHT_TEST_ARGS"); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			panic(err)
		}
		if v := os.Getenv("HINDSIGHT_TEST_CONSOLIDATE_BLOCK"); v != "" {
			blockAt, err := strconv.Atoi(v)
			if err != nil {
				panic(err)
			}
			var started atomic.Int32
			adjustActivities = func(a *activities.Activities) {
				a.OnConsolidate = func(ctx context.Context, b activities.ConsolidationBatch, cluster int) error {
					fmt.Fprintf(os.Stdout, "consolidating %s %d\n", b.TaskType, cluster)
					if int(started.Add(1)) == blockAt {
						select {} // until SIGKILL
					}
					return nil
				}
			}
		}
		os.Exit(run(context.Background(), args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
