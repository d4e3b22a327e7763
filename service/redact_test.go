package service

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/recall"
)

type queryRecorder struct {
	noRecall
	got []memory.Query
}

func (r *queryRecorder) Recall(_ context.Context, q memory.Query) (recall.Response, error) {
	r.got = append(r.got, q)
	return recall.Response{}, nil
}

// TestIdentifiersAndQueriesAreRedacted puts a secret into every field a
// caller names (session, user and agent IDs, tool, task type, scope,
// entities, a recall query and its filters): none reaches the store, the
// ledger or the recall engine, and the same identifier redacts alike, so
// what is stored under it is found again.
func TestIdentifiersAndQueriesAreRedacted(t *testing.T) {
	const secret = "Zq8!vR2pLx"
	withSecret := "PGPASSWORD=" + secret
	store := memory.NewMemStore()
	l := &fakeLedger{store: store, clock: time.Now, replies: map[string]ledger.Reply{}}
	rec := &queryRecorder{}
	s := New(Config{}, store, nil, rec, nil)
	s.ledgers = newLedgerQueue(l.send, time.Minute)
	ctx := context.Background()

	if _, err := s.Log(ctx, "acme", LogRequest{SessionID: "s-" + withSecret, UserID: "u-" + withSecret, Role: memory.RoleTool,
		ToolName: "bash " + withSecret, Content: "ok"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Store(ctx, "acme", StoreRequest{Kind: memory.KindFact, Content: "Staging listens on 6432.", TaskType: "db " + withSecret,
		Entities: []string{withSecret}, UserID: "u-" + withSecret, AgentID: "a-" + withSecret, Scope: "user"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recall(ctx, memory.Query{Tenant: "acme", Text: "connect with " + withSecret + " psql", TaskType: withSecret,
		Project: "/src/" + withSecret, UserID: "u-" + withSecret, AgentID: "a-" + withSecret, Entities: []string{withSecret}}); err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	red, err := s.redactor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	events, err := store.SessionEvents(ctx, "acme", red.String("s-"+withSecret))
	if err != nil || len(events) != 1 {
		t.Fatalf("the event logged under a redacted session ID: %v, %v", events, err)
	}
	ds, err := store.Decisions(ctx, memory.DecisionFilter{Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{events, ds, rec.got, l.replies} {
		raw, _ := json.Marshal(v)
		seen.Write(raw)
	}
	if strings.Contains(seen.String(), secret) {
		t.Fatalf("a secret in an identifier or a query was stored or sent on: %s", seen.String())
	}
	if len(rec.got) != 1 || !strings.Contains(rec.got[0].Text, "psql") || !strings.Contains(rec.got[0].UserID, "u-PGPASSWORD=⟨secret:") {
		t.Fatalf("the recall engine got %+v", rec.got)
	}
}
