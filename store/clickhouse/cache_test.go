package clickhouse_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/store/clickhouse"
)

// TestMemoryCachePastItsBounds runs the embedded store with a cache bounded
// far below what its tenants hold (two tenants, three memories, three IDs):
// every answer must still be the store's, as the cache drops, and stops
// loading, what does not fit.
func TestMemoryCachePastItsBounds(t *testing.T) {
	clickhouse.BoundCache(t, 2, 3, 3)
	ctx := context.Background()
	s := openChDB(t, "")
	at := time.Date(2026, 5, 4, 8, 0, 0, 0, time.UTC)
	var ms []memory.Memory
	for i := range 6 {
		for _, tenant := range []string{"a", "b", "c"} {
			m := memory.Memory{ID: fmt.Sprintf("%s-m%d", tenant, i), Tenant: tenant, Version: 1, Kind: memory.KindFact,
				Content: fmt.Sprintf("Fact %d of %s.", i, tenant), Status: memory.StatusLive, CreatedAt: at, UpdatedAt: at.Add(time.Duration(i) * time.Second)}
			m.ContentHash = memory.ContentHash(m.Kind, m.Content)
			ms = append(ms, m)
		}
	}
	check := func(what string, f memory.MemoryFilter) {
		t.Helper()
		got, err := s.Memories(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		f.Limit = 1000 // not served by the cache
		want, err := s.Memories(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the cache answered %+v, the store %+v", what, got, want)
		}
	}
	for round := range 3 {
		for i, m := range ms {
			if round > 0 {
				m.Version, m.Content = round+1, fmt.Sprintf("%s, round %d", m.Content, round)
				m.ContentHash = memory.ContentHash(m.Kind, m.Content)
				ms[i] = m
			}
			if err := s.PutMemories(ctx, []memory.Memory{m}); err != nil {
				t.Fatal(err)
			}
			if err := s.RecordUsage(ctx, []memory.Usage{{Tenant: m.Tenant, MemoryID: m.ID, Kind: memory.UsageRecalled, At: at.Add(time.Duration(round) * time.Minute)}}); err != nil {
				t.Fatal(err)
			}
			d := memory.Decision{ID: fmt.Sprintf("d-%s-%d", m.ID, round), Tenant: m.Tenant, Action: memory.ActionStore, CreatedAt: at,
				Candidate: memory.Candidate{Kind: m.Kind, Content: m.Content}, After: []memory.Memory{m}}
			if err := s.AppendDecisions(ctx, []memory.Decision{d}); err != nil {
				t.Fatal(err)
			}
			var ids, hashes, decisions []string
			for _, o := range ms[:i+1] {
				if o.Tenant == m.Tenant {
					ids, hashes = append(ids, o.ID), append(hashes, o.ContentHash)
					decisions = append(decisions, fmt.Sprintf("d-%s-%d", o.ID, round))
				}
			}
			check("by ID", memory.MemoryFilter{Tenant: m.Tenant, IDs: ids})
			check("by hash", memory.MemoryFilter{Tenant: m.Tenant, ContentHashes: hashes})
			got, err := s.LoggedDecisionIDs(ctx, m.Tenant, decisions)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			slices.Sort(decisions)
			if !slices.Equal(got, decisions) {
				t.Fatalf("logged %v, want %v", got, decisions)
			}
		}
	}
}
