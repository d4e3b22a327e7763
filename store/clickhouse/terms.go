package clickhouse

import (
	"context"
	"slices"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/hindsight-memory/hindsight/memory"
)

var _ memory.TermStats = (*Store)(nil)

const termColumns = "tenant, term, memory_id, version, live, length, value"

// PutTermRows implements memory.TermStats: one insert into memory_terms,
// whose ReplacingMergeTree keeps each (tenant, term, memory) row's highest
// version.
func (s *Store) PutTermRows(ctx context.Context, rows []memory.TermRow) error {
	if err := memory.ValidateTermRows("clickhouse: put term rows", rows); err != nil {
		return err
	}
	return s.insert(ctx, "put term rows", "memory_terms", termColumns, len(rows), func(i int) []any {
		r := rows[i]
		live := uint8(0)
		if r.Live {
			live = 1
		}
		return []any{r.Tenant, r.Term, r.MemoryID, uint32(r.Version), live, uint32(max(r.Length, 0)), r.Value}
	})
}

// TermStats implements memory.TermStats in one query and one read of
// the table: the tenant's memory rows (term ”) and the rows of the terms
// asked for, both ranges of its sort key (tenant, term), grouped by
// memory. A memory counts when its memory row is live; a term counts for
// it when the term row's version is the memory row's. The memory rows
// themselves give the totals (term ”).
func (s *Store) TermStats(ctx context.Context, tenant string, terms []string) (memory.TermCounts, error) {
	const op = "clickhouse: term stats"
	if err := memory.ValidateTenant(op, tenant); err != nil {
		return memory.TermCounts{}, err
	}
	keys := append([]string{""}, terms...)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	c := memory.TermCounts{Terms: map[string]memory.TermStat{}}
	const q = `SELECT t.1 AS term, count(), sum(t.3), any(t.4)
FROM (
    SELECT memory_id, maxIf(version, term = '' AND live = 1) AS cur,
           groupArray((term, version, length, value)) AS ts
    FROM memory_terms FINAL
    WHERE tenant = {tenant:String} AND term IN {terms:Array(String)}
    GROUP BY memory_id
    HAVING cur > 0
)
ARRAY JOIN ts AS t
WHERE t.2 = cur
GROUP BY term`
	err := s.queryRows(ctx, "term stats", q, func(r driver.Rows) error {
		var (
			term, value string
			n, length   uint64
		)
		if err := r.Scan(&term, &n, &length, &value); err != nil {
			return err
		}
		if term == "" {
			c.Docs, c.Length = int64(n), int64(length)
			return nil
		}
		c.Terms[term] = memory.TermStat{Docs: int64(n), Value: value}
		return nil
	}, ch.Named("tenant", tenant), ch.Named("terms", keys))
	return c, err
}
