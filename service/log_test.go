package service_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/service"
	"github.com/hindsight-memory/hindsight/store/clickhouse/chdb"
)

func openChDB(t *testing.T, dir string) *chdb.Store {
	t.Helper()
	lib, err := chdb.LibPathFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	s, err := chdb.Open(context.Background(), chdb.Config{DataDir: dir, LibPath: lib})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestTwoProcessesLogOneSession runs two services, as two MCP processes
// would, on one ClickHouse store and appends to one session from both at
// once: every acknowledged event is stored exactly once, in time order,
// and an event resent with the client's ID for it is stored once.
func TestTwoProcessesLogOneSession(t *testing.T) {
	dir := t.TempDir()
	a := service.New(service.Config{}, openChDB(t, dir), nil, nil, nil)
	b := service.New(service.Config{}, openChDB(t, dir), nil, nil, nil)
	ctx := context.Background()
	const each = 50
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked = map[string]string{} // event ID → content
	)
	for p, s := range []*service.Service{a, b} {
		for i := range each {
			wg.Go(func() {
				content := fmt.Sprintf("process %d, event %d", p, i)
				e, err := s.Log(ctx, "acme", service.LogRequest{SessionID: "s1", Role: memory.RoleAssistant, Content: content})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if prev, ok := acked[e.ID]; ok {
					t.Errorf("%q and %q were acknowledged with one ID, %s", prev, content, e.ID)
				}
				acked[e.ID] = content
			})
		}
	}
	wg.Wait()
	resend := service.LogRequest{SessionID: "s1", EventID: "client-7", Role: memory.RoleUser, Content: "resent", TS: time.Now().Add(time.Hour)}
	first, err := a.Log(ctx, "acme", resend)
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.Log(ctx, "acme", resend)
	if err != nil {
		t.Fatal(err)
	}
	if first.ID != second.ID {
		t.Fatalf("an event resent with its event_id got a new ID: %s, then %s", first.ID, second.ID)
	}
	acked[first.ID] = "resent"

	stored, err := openChDB(t, dir).SessionEvents(ctx, "acme", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != len(acked) {
		t.Fatalf("%d events acknowledged, %d stored", len(acked), len(stored))
	}
	for i, e := range stored {
		if acked[e.ID] != e.Content {
			t.Fatalf("stored event %s = %q, acknowledged as %q", e.ID, e.Content, acked[e.ID])
		}
		if i > 0 && memory.CompareEvents(stored[i-1], e) > 0 {
			t.Fatalf("events %d and %d are out of order: %v after %v", i-1, i, e.TS, stored[i-1].TS)
		}
	}
	if stored[len(stored)-1].Content != "resent" {
		t.Fatalf("the latest event is %q, want the resent one", stored[len(stored)-1].Content)
	}
}
