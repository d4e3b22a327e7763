package service

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/ledger"
)

// TestLedgerQueueStaysUnderTheUpdateLimit sends a burst of 200 requests
// for one tenant through the queue to a ledger that takes its time: at
// most ledgerUpdatesInFlight updates are ever open at once (Temporal
// refuses the eleventh), requests that waited go together, and every
// caller gets its own reply, invalid ones their own error.
func TestLedgerQueueStaysUnderTheUpdateLimit(t *testing.T) {
	var open, most, updates atomic.Int32
	release := make(chan struct{})
	send := func(ctx context.Context, tenant string, reqs []ledger.Request) ([]ledger.Reply, error) {
		n := open.Add(1)
		defer open.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		updates.Add(1)
		<-release
		out := make([]ledger.Reply, len(reqs))
		for i, r := range reqs {
			out[i] = ledger.Reply{RequestID: r.ID}
			if r.Content == "bad" {
				out[i].Code, out[i].Error = "invalid", "content: bad"
			}
		}
		return out, nil
	}
	q := newLedgerQueue(send, time.Minute)
	const n = 200
	var queued sync.WaitGroup
	queued.Add(n)
	q.queued = queued.Done
	var wg sync.WaitGroup
	errs := make([]error, n)
	replies := make([]ledger.Reply, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := ledger.Request{ID: fmt.Sprintf("store/%03d", i), Tenant: "acme", Op: ledger.OpCorrect}
			if i%50 == 7 {
				req.Content = "bad"
			}
			replies[i], errs[i] = q.call(context.Background(), req)
		}()
	}
	// The first updates hold the ledger until the whole burst is queued.
	queued.Wait()
	close(release)
	wg.Wait()
	q.drains.Wait()
	if m := most.Load(); m > ledgerUpdatesInFlight {
		t.Fatalf("%d updates were open at once, want at most %d", m, ledgerUpdatesInFlight)
	}
	// The first updates took a request each; the rest waited and went in
	// batches of up to ledgerBatchMax.
	if u, most := updates.Load(), int32(ledgerUpdatesInFlight+(n+ledgerBatchMax-1)/ledgerBatchMax+ledgerUpdatesInFlight); u > most {
		t.Fatalf("%d updates for %d requests, want at most %d: the waiting ones were not batched", u, n, most)
	}
	for i := range n {
		want := fmt.Sprintf("store/%03d", i)
		if i%50 == 7 {
			if errs[i] == nil {
				t.Errorf("request %d: no error for its invalid content", i)
			}
			continue
		}
		if errs[i] != nil || replies[i].RequestID != want {
			t.Errorf("request %d: reply %q, error %v", i, replies[i].RequestID, errs[i])
		}
	}
	t.Logf("%d requests in %d updates, at most %d open at once", n, updates.Load(), most.Load())
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.tenants) != 0 {
		t.Fatalf("the queue kept %d idle tenants", len(q.tenants))
	}
}
