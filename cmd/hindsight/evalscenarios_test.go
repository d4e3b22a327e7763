package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hindsight-memory/hindsight/eval/scenarios"
)

// scenarioFloor is the overall score the development scenario corpus must
// keep: what the write path and recall reach today (0.793, 371 of 468
// checks, measured with `hindsight eval scenarios --data
// ../shared/bench/scenarios/dev.json`), less 0.02.
const scenarioFloor = 0.77

// devScenarios finds the development scenario corpus: $HINDSIGHT_SCENARIOS
// (the Makefile sets it when the bench sits next to the repository), or
// the bench's path relative to the repository.
func devScenarios(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("HINDSIGHT_SCENARIOS"); p != "" {
		return p
	}
	p := filepath.Join("..", "..", "..", "shared", "bench", "scenarios", "dev.json")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("scenario corpus not found at %s; set HINDSIGHT_SCENARIOS to dev.json", p)
	}
	return p
}

// TestScenarioCorpus runs `hindsight eval scenarios` on the development
// corpus, end to end on the embedded stack (Temporal, the workflows and
// activities, chDB, the local index, the service), and holds its overall
// score to the floor. The report is in the test log.
func TestScenarioCorpus(t *testing.T) {
	corpus, r := runCorpus(t, devScenarios(t))
	if got := r.Overall.All.Value(); got < scenarioFloor {
		t.Errorf("overall score %.3f (%d of %d checks) is below the floor %.2f", got, r.Overall.All.Pass, r.Overall.All.Total, scenarioFloor)
	}
	if r.Overall.Scenarios != len(corpus.Scenarios) || r.Sessions == 0 {
		t.Errorf("ran %d scenarios and %d sessions of %d scenarios", r.Overall.Scenarios, r.Sessions, len(corpus.Scenarios))
	}
}

// TestMultiUserScenarios runs the repository's multi-user scenarios
// (testdata/scenarios/multiuser.json: support desks and engineering teams,
// each session with its user, each probe recalling for one) end to end.
// No probe may return another user's memory, and the corpus keeps its
// overall score (0.81, 58 of 72 checks, less 0.05).
func TestMultiUserScenarios(t *testing.T) {
	_, r := runCorpus(t, "../../testdata/scenarios/multiuser.json")
	for _, c := range r.Failures {
		if c.Type == scenarios.CheckForbid {
			t.Errorf("%s %s: %s (found %s)", c.Scenario, c.Where, c.Want, c.Found)
		}
	}
	if got := r.Overall.All.Value(); got < 0.76 {
		t.Errorf("overall score %.3f (%d of %d checks) is below 0.76", got, r.Overall.All.Pass, r.Overall.All.Total)
	}
}

// runCorpus runs a scenario corpus end to end on a fresh embedded stack
// and logs its report.
func runCorpus(t *testing.T, path string) (scenarios.Corpus, scenarios.Report) {
	t.Helper()
	corpus, err := scenarios.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	st := startTestDev(t, t.TempDir())
	defer st.Close()
	r, err := scenarios.Run(context.Background(), serviceSystem{st.service, st.runtime.Store}, corpus, scenarios.Options{Parallel: 3, Corpus: path})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	return corpus, r
}
