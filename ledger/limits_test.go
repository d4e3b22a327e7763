package ledger_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
)

// TestLimitsAreNamed refuses a stated memory past any limit with an error
// that names the field and the limit, before anything reaches a workflow.
func TestLimitsAreNamed(t *testing.T) {
	ok := memory.Candidate{Kind: memory.KindLesson, Content: "Detect the CSV encoding first."}
	many := make([]string, ledger.MaxEntities+1)
	for i := range many {
		many[i] = fmt.Sprint("e", i)
	}
	for field, c := range map[string]memory.Candidate{
		"content":         {Kind: ok.Kind, Content: strings.Repeat("x", ledger.MaxContent+1)},
		"counter_example": {Kind: ok.Kind, Content: ok.Content, CounterExample: strings.Repeat("x", 3_900_000)},
		"task_type":       {Kind: ok.Kind, Content: ok.Content, TaskType: strings.Repeat("x", 1_000_000)},
		"entities":        {Kind: ok.Kind, Content: ok.Content, Entities: many},
		"entity 0":        {Kind: ok.Kind, Content: ok.Content, Entities: []string{strings.Repeat("x", ledger.MaxEntity+1)}},
	} {
		err := ledger.ValidateCandidate(c)
		if !memory.IsInvalid(err) || !strings.Contains(memory.ErrorMessage(err), field) || !strings.Contains(memory.ErrorMessage(err), "limit") {
			t.Errorf("%s past its limit: %v", field, err)
		}
	}
	if err := ledger.ValidateCandidate(ok); err != nil {
		t.Fatal(err)
	}
}

// TestDistilledCandidatesAreClipped fits what an extractor or a promotion
// produced into the limits instead of failing the merge.
func TestDistilledCandidatesAreClipped(t *testing.T) {
	evidence := make([]string, ledger.MaxEvidence*3)
	for i := range evidence {
		evidence[i] = fmt.Sprint("ev_", i)
	}
	c := ledger.ClipCandidate(memory.Candidate{
		Kind: memory.KindLesson, Content: "When importing, use encoding='gbk'.",
		CounterExample: strings.Repeat("报错：UnicodeDecodeError ", 1000), TaskType: strings.Repeat("t", ledger.MaxTaskType+1),
		Entities: []string{"gbk", strings.Repeat("y", ledger.MaxEntity+1), "csv"}, Evidence: evidence,
	})
	if err := ledger.ValidateCandidate(c); err != nil {
		t.Fatalf("a clipped candidate is still refused: %v", err)
	}
	if !utf8.ValidString(c.CounterExample) || !strings.HasSuffix(c.CounterExample, "…") || c.TaskType != "" ||
		strings.Join(c.Entities, ",") != "gbk,csv" || len(c.Evidence) != ledger.MaxEvidence {
		t.Fatalf("clipped: counter %d bytes (valid %v), task %q, entities %v, evidence %d", len(c.CounterExample), utf8.ValidString(c.CounterExample), c.TaskType, c.Entities, len(c.Evidence))
	}
	// A request of distilled candidates validates as it will be merged.
	r := ledger.Request{ID: "merge/x", Tenant: "acme", Op: ledger.OpMerge, Candidates: []memory.Candidate{{Kind: memory.KindLesson, Content: "x", Evidence: evidence}}}
	if err := r.Validate(); err != nil {
		t.Fatalf("a merge request with long evidence: %v", err)
	}
}
