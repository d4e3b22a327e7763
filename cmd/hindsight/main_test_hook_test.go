package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/consolidate"
	"github.com/hindsight-memory/hindsight/memory"
)

// TestMain lets a test run the hindsight binary as a child process: the
// test binary re-executes itself with HINDSIGHT_TEST_ARGS set to the
// command line (JSON), and runs it instead of the tests. A process that
// such a child starts itself (a hook's detached hand-over) inherits the
// variable and has its own command line, which it runs instead.
//
// With HINDSIGHT_TEST_CONSOLIDATE_BLOCK=N as well, the child prints
// "consolidating TASK_TYPE SUMMARY_ID" as each cluster's consolidation
// starts (its typical episode is summarised) and, at the N-th (from 1; 0
// never), blocks until it is killed.
func TestMain(m *testing.M) {
	if raw := os.Getenv("HINDSIGHT_TEST_ARGS"); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			panic(err)
		}
		if len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-test.") {
			args = os.Args[1:]
		}
		if v := os.Getenv("HINDSIGHT_TEST_CONSOLIDATE_BLOCK"); v != "" {
			blockAt, err := strconv.Atoi(v)
			if err != nil {
				panic(err)
			}
			var started atomic.Int32
			adjustActivities = func(a *activities.Activities) {
				a.Summarizer = announcingSummarizer{func(taskType, summary string) {
					fmt.Fprintf(os.Stdout, "consolidating %s %s\n", taskType, summary)
					if int(started.Add(1)) == blockAt {
						select {} // until SIGKILL
					}
				}}
			}
		}
		os.Exit(run(context.Background(), args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// childCommand is the hindsight binary run as a child process with args:
// this test binary, which TestMain turns into hindsight for it. env is
// added to this process's environment.
func childCommand(args []string, env ...string) *exec.Cmd {
	raw, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), "HINDSIGHT_TEST_ARGS="+string(raw)), env...)
	return cmd
}

// announcingSummarizer is the offline summarizer, announcing each cluster.
type announcingSummarizer struct {
	announce func(taskType, summary string)
}

func (s announcingSummarizer) Summarize(ctx context.Context, tenant string, members []memory.Episode, now time.Time) (consolidate.Summary, error) {
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.ID
	}
	s.announce(members[0].TaskType, consolidate.SummaryID(tenant, ids))
	return consolidate.Offline{}.Summarize(ctx, tenant, members, now)
}
