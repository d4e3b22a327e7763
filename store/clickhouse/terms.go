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

// TermStats implements memory.TermStats in one query. The memory rows
// (term ”) of the tenant give the recallable memories and their current
// versions; a term row counts when its version is its memory's. Both
// sides read a range of the table's sort key (tenant, term): the memory
// rows, and the rows of the terms asked for.
func (s *Store) TermStats(ctx context.Context, tenant string, terms []string) (memory.TermCounts, error) {
	const op = "clickhouse: term stats"
	if err := memory.ValidateTenant(op, tenant); err != nil {
		return memory.TermCounts{}, err
	}
	terms = slices.DeleteFunc(slices.Clone(terms), func(t string) bool { return t == "" })
	slices.Sort(terms)
	terms = slices.Compact(terms)
	c := memory.TermCounts{Terms: map[string]memory.TermStat{}}
	// Row kind 0 is the totals, 1 a term.
	const q = `WITH docs AS (
    SELECT memory_id, version, length FROM memory_terms FINAL
    WHERE tenant = {tenant:String} AND term = '' AND live = 1
)
SELECT 0 AS k, '' AS term, count() AS n, sum(length) AS len, '' AS value FROM docs
UNION ALL
SELECT 1, t.term, count(), 0, any(t.value)
FROM (SELECT term, memory_id, version, value FROM memory_terms FINAL
      WHERE tenant = {tenant:String} AND term IN {terms:Array(String)}) AS t
INNER JOIN docs AS d ON t.memory_id = d.memory_id AND t.version = d.version
GROUP BY t.term`
	err := s.queryRows(ctx, "term stats", q, func(r driver.Rows) error {
		var (
			k           uint8
			term, value string
			n, length   uint64
		)
		if err := r.Scan(&k, &term, &n, &length, &value); err != nil {
			return err
		}
		if k == 0 {
			c.Docs, c.Length = int64(n), int64(length)
			return nil
		}
		c.Terms[term] = memory.TermStat{Docs: int64(n), Value: value}
		return nil
	}, ch.Named("tenant", tenant), ch.Named("terms", nonNil(terms)))
	return c, err
}
