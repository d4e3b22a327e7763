package service

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/recall"
)

// fakeLedger applies requests as the tenant's ledger does, for what
// idempotency sees of it: a request ID it has seen is answered with its
// first reply as a repeat, a new one logs its decisions (named as the
// ledger names them) at the clock's time.
type fakeLedger struct {
	store   memory.EpisodicStore
	clock   func() time.Time
	mu      sync.Mutex
	replies map[string]ledger.Reply
	applied int
}

func (l *fakeLedger) send(ctx context.Context, tenant string, reqs []ledger.Request) ([]ledger.Reply, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]ledger.Reply, len(reqs))
	for i, req := range reqs {
		if r, ok := l.replies[req.ID]; ok {
			r.Repeat = true
			out[i] = r
			continue
		}
		l.applied++
		r := ledger.Reply{RequestID: req.ID}
		for j, id := range req.DecisionIDs() {
			d := memory.Decision{ID: id, Tenant: tenant, Action: memory.ActionStore, Reason: "stated", CreatedAt: l.clock()}
			if j < len(req.Candidates) {
				d.Candidate = req.Candidates[j]
			}
			if err := l.store.LogDecision(ctx, d); err != nil {
				return nil, err
			}
			r.Decisions = append(r.Decisions, d)
		}
		l.replies[req.ID] = r
		out[i] = r
	}
	return out, nil
}

type noRecall struct{}

func (noRecall) Recall(context.Context, memory.Query) (recall.Response, error) {
	return recall.Response{}, nil
}
func (noRecall) Refresh(context.Context, string) error { return nil }
func (noRecall) Invalidate(string)                     {}

// TestRetriesAcrossTheWindow stores a memory without a request ID just
// before a period of repeatWindow ends and retries it just after: the
// retry is answered with the first reply and applies nothing, as a
// calendar bucket would not; the same statement once the window has
// passed is applied again. A client's request ID sent again with other
// content is an error naming request_id, and with the same content a
// repeat.
func TestRetriesAcrossTheWindow(t *testing.T) {
	store := memory.NewMemStore()
	// Ten seconds before a period ends.
	now := time.Unix(0, 0).UTC().Add(1000*repeatWindow - 10*time.Second)
	clock := func() time.Time { return now }
	l := &fakeLedger{store: store, clock: clock, replies: map[string]ledger.Reply{}}
	s := New(Config{}, store, nil, noRecall{}, nil)
	s.clock = clock
	s.ledgers = newLedgerQueue(l.send, time.Minute)
	ctx := context.Background()
	stmt := StoreRequest{Kind: memory.KindFact, Content: "The staging database listens on port 6432, not 5432."}

	first, repeat, err := s.Store(ctx, "acme", stmt)
	if err != nil || repeat {
		t.Fatalf("first store: %+v, repeat %v, %v", first, repeat, err)
	}
	now = now.Add(20 * time.Second) // into the next period, 20 s after the first
	retry, repeat, err := s.Store(ctx, "acme", stmt)
	if err != nil || !repeat || retry.ID != first.ID || l.applied != 1 {
		t.Fatalf("a retry 20 s later, across a period's boundary: decision %s (first %s), repeat %v, %d applied, %v", retry.ID, first.ID, repeat, l.applied, err)
	}
	now = now.Add(repeatWindow) // past the window of the first
	again, repeat, err := s.Store(ctx, "acme", stmt)
	if err != nil || repeat || again.ID == first.ID || l.applied != 2 {
		t.Fatalf("the same statement after the window: decision %s (first %s), repeat %v, %d applied, %v", again.ID, first.ID, repeat, l.applied, err)
	}

	named := stmt
	named.RequestID = "req-1"
	if _, _, err := s.Store(ctx, "acme", named); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	if _, repeat, err := s.Store(ctx, "acme", named); err != nil || !repeat {
		t.Fatalf("a retry with its request ID an hour later: repeat %v, %v", repeat, err)
	}
	other := named
	other.Content = "The staging database listens on port 7432."
	_, _, err = s.Store(ctx, "acme", other)
	if !memory.IsInvalid(err) || !strings.Contains(err.Error(), "request_id") {
		t.Fatalf("request_id req-1 again with other content: %v, want an invalid-argument error naming request_id", err)
	}
	if l.applied != 3 {
		t.Fatalf("%d requests applied, want 3", l.applied)
	}
}
