package clickhouse

import (
	"context"
	"slices"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/hindsight-memory/hindsight/memory"
)

// purgeStep counts and deletes the rows of one table. count is a query
// returning one UInt64 per column of the counts it fills.
type purgeStep struct {
	count  string
	into   []*int
	delete []string
}

// Purge implements memory.EpisodicStore. Rows are counted (distinct IDs, as
// readers see them), then removed with lightweight DELETE, which returns
// once the rows are invisible to every later read. Decisions naming a
// purged memory are deleted with it, so no text of the memory survives.
// Purging what is already gone counts zero, so Purge is idempotent.
func (s *Store) Purge(ctx context.Context, r memory.PurgeRequest) (memory.PurgeCounts, error) {
	const op = "clickhouse: purge"
	var n memory.PurgeCounts
	if err := memory.ValidateTenant(op, r.Tenant); err != nil {
		return n, err
	}
	if s.cache != nil {
		defer s.cache.purged(r.Tenant)
	}
	args := []any{ch.Named("tenant", r.Tenant), ch.Named("sessions", nonNil(r.SessionIDs)),
		ch.Named("episodes", nonNil(r.EpisodeIDs)), ch.Named("memories", nonNil(r.MemoryIDs))}
	var (
		events    = "session_id IN {sessions:Array(String)}"
		episodes  = "id IN {episodes:Array(String)}"
		memories  = "id IN {memories:Array(String)}"
		usage     = "memory_id IN {memories:Array(String)}"
		decisions = "hasAny(memory_ids, {memories:Array(String)})"
	)
	if r.All {
		events, episodes, memories, usage, decisions = "1", "1", "1", "1", "1"
	}
	var steps []purgeStep
	if r.All || len(r.SessionIDs) > 0 {
		steps = append(steps, purgeStep{
			count:  "SELECT uniqExact(id) FROM events WHERE tenant = {tenant:String} AND " + events,
			into:   []*int{&n.Events},
			delete: []string{"DELETE FROM events WHERE tenant = {tenant:String} AND " + events},
		})
	}
	if r.All || len(r.EpisodeIDs) > 0 {
		steps = append(steps, purgeStep{
			count: "SELECT uniqExact(id) FROM (SELECT id FROM episodes WHERE tenant = {tenant:String} AND " + episodes +
				" UNION ALL SELECT id FROM episodes_archive WHERE tenant = {tenant:String} AND " + episodes + ")",
			into: []*int{&n.Episodes},
			delete: []string{
				"DELETE FROM episodes WHERE tenant = {tenant:String} AND " + episodes,
				"DELETE FROM episodes_archive WHERE tenant = {tenant:String} AND " + episodes,
			},
		})
	}
	if r.All || len(r.MemoryIDs) > 0 {
		// The rows left in memories_current, memory_usage and memory_terms are counted
		// too: an attempt that failed after deleting the versions must
		// not make the retry skip the rest.
		var left int
		steps = append(steps, purgeStep{
			count: "SELECT uniqExact(id), uniqExact(id, version), " +
				"(SELECT count() FROM memories_current WHERE tenant = {tenant:String} AND " + memories + ") + " +
				"(SELECT count() FROM memory_usage WHERE tenant = {tenant:String} AND " + usage + ") + " +
				"(SELECT count() FROM memory_terms WHERE tenant = {tenant:String} AND " + usage + ") " +
				"FROM memory_versions WHERE tenant = {tenant:String} AND " + memories,
			into: []*int{&n.Memories, &n.Versions, &left},
			delete: []string{
				"DELETE FROM memories_current WHERE tenant = {tenant:String} AND " + memories,
				"DELETE FROM memory_usage WHERE tenant = {tenant:String} AND " + usage,
				// A memory's terms are fragments of its text.
				"DELETE FROM memory_terms WHERE tenant = {tenant:String} AND " + usage,
				"DELETE FROM memory_versions WHERE tenant = {tenant:String} AND " + memories,
			},
		}, purgeStep{
			count:  "SELECT uniqExact(id) FROM merge_decisions WHERE tenant = {tenant:String} AND " + decisions,
			into:   []*int{&n.Decisions},
			delete: []string{"DELETE FROM merge_decisions WHERE tenant = {tenant:String} AND " + decisions},
		})
	}
	for _, st := range steps {
		counts := make([]uint64, len(st.into))
		err := s.queryRows(ctx, "purge: count", st.count, func(r driver.Rows) error {
			dest := make([]any, len(counts))
			for i := range counts {
				dest[i] = &counts[i]
			}
			return r.Scan(dest...)
		}, args...)
		if err != nil {
			return n, err
		}
		for i, c := range counts {
			*st.into[i] = int(c)
		}
		if !slices.ContainsFunc(counts, func(c uint64) bool { return c > 0 }) {
			continue // nothing left of it: a retry, or nothing to purge
		}
		for _, del := range st.delete {
			if err := s.exec(ctx, "purge: delete", del, args...); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// Tenants implements memory.EpisodicStore: the tenants with any episode,
// hot or archived, or any memory.
func (s *Store) Tenants(ctx context.Context) ([]string, error) {
	var out []string
	err := s.queryRows(ctx, "tenants", `SELECT tenant FROM (
    SELECT DISTINCT tenant FROM episodes
    UNION ALL SELECT DISTINCT tenant FROM episodes_archive
    UNION ALL SELECT DISTINCT tenant FROM memories_current
) GROUP BY tenant ORDER BY tenant`, func(r driver.Rows) error {
		var t string
		err := r.Scan(&t)
		out = append(out, t)
		return err
	})
	return out, err
}
