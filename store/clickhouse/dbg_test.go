package clickhouse_test

import (
	"context"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

func TestDbgLatency(t *testing.T) {
	start := time.Now()
	s := openChDB(t, "")
	t.Log("open+migrate", time.Since(start))
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		start = time.Now()
		s.SessionEvents(ctx, "t1", "s1")
		t.Log("session events", time.Since(start))
	}
	for i := 0; i < 3; i++ {
		start = time.Now()
		err := s.AppendEvents(ctx, []memory.Event{{ID: "e" + string(rune('a'+i)), Tenant: "t1", SessionID: "s1", Role: "user", TS: time.Now()}})
		t.Log("append", time.Since(start), err)
	}
	for i := 0; i < 3; i++ {
		start = time.Now()
		err := s.PutEpisode(ctx, memory.Episode{ID: "x", Tenant: "t1", Status: "live", EndedAt: time.Now()})
		t.Log("put episode", time.Since(start), err)
	}
}
