package workflows

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
)

// payloadLimit is Temporal's default limit on one payload.
const payloadLimit = 2 << 20

// largestReply is the largest reply a ledger request can produce: the most
// candidates a request may carry, each as long as allowed, each judged
// against eight neighbours as long as allowed, each a conflict that wrote
// two versions.
func largestReply(id string) ledger.Reply {
	text := strings.Repeat("x", ledger.MaxContent)
	m := func(i int) memory.Memory {
		return memory.Memory{ID: fmt.Sprint("m", i), Tenant: "acme", Version: 3, Kind: memory.KindLesson,
			Content: text, CounterExample: text, Status: memory.StatusLive}
	}
	r := ledger.Reply{RequestID: id}
	for i := range ledger.MaxCandidatesPerRequest {
		d := memory.Decision{ID: fmt.Sprint(id, "/", i), Tenant: "acme", Action: memory.ActionMerge, Verdict: memory.VerdictConflicts,
			Candidate: memory.Candidate{Kind: memory.KindLesson, Content: text, CounterExample: text},
			Before:    []memory.Memory{m(i)}, After: []memory.Memory{m(i), m(i + 1000)}}
		for j := range 8 {
			d.Neighbors = append(d.Neighbors, memory.ScoredCandidate{ID: fmt.Sprint("n", j), Content: text, Similarity: 0.9})
		}
		r.Decisions = append(r.Decisions, d)
	}
	return r
}

func size(t *testing.T, v any) int {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// TestLedgerPayloadsAreBounded fills a ledger with the largest replies a
// request can produce, and with failures whose errors quote megabytes of
// text that escapes at six bytes a character: each reply stays under
// Temporal's payload limit,
// and the state carried across continue-as-new (the last 200 replies and
// nothing pending) stays small, whatever the replies held.
func TestLedgerPayloadsAreBounded(t *testing.T) {
	l := &ledgerRun{state: ledger.State{Tenant: "acme"}, done: map[string]ledger.Reply{}}
	t.Logf("the largest reply: %d bytes as applied, %d as sent", size(t, largestReply("r")), size(t, ledger.Bound(largestReply("r"))))
	for i := range ledgerRecentReplies + 50 {
		r := ledger.Bound(largestReply(fmt.Sprint("req-", i)))
		if n := size(t, r); n > payloadLimit/2 {
			t.Fatalf("a reply is %d bytes; the payload limit is %d", n, payloadLimit)
		}
		l.finish(r)
		// And as many failures quoting a megabyte of escaping text.
		l.finish(ledger.Reply{RequestID: fmt.Sprint("failed-", i)}.Failed(memory.ENOTFOUND, "memory "+strings.Repeat("<", 1<<20)+" not found"))
	}
	carried := l.carry()
	if len(carried.Carried) != ledgerRecentReplies {
		t.Fatalf("carried %d replies, want %d", len(carried.Carried), ledgerRecentReplies)
	}
	t.Logf("carried state: %d bytes", size(t, carried))
	if n := size(t, carried); n > payloadLimit/4 {
		t.Fatalf("the carried ledger state is %d bytes; want under %d", n, payloadLimit/4)
	}
}
