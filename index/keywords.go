package index

import (
	"context"
	"sync"
	"time"

	"github.com/hindsight-memory/hindsight/bm25"
	"github.com/hindsight-memory/hindsight/memory"
)

// Keywords gives memories' vector documents their sparse keyword vectors
// (bm25.Document) and keeps the tenants' term statistics, for a vector
// index that recall searches by hybrid search (production: Milvus).
//
// A document is weighted with its tenant's average length when it is
// written. The average is read from the term statistics at most every
// avgTTL per tenant and moved by what this process writes in between, so
// a burst of writes costs no read per batch.
type Keywords struct {
	stats memory.TermStats

	mu   sync.Mutex
	avgs map[string]*tenantLength
}

type tenantLength struct {
	docs, length int64
	read         time.Time
}

// avgTTL is how long a tenant's average length is used before it is read
// again; maxTenantLengths bounds the tenants remembered.
const (
	avgTTL           = time.Minute
	maxTenantLengths = 4096
)

// NewKeywords returns Keywords that keep statistics in stats.
func NewKeywords(stats memory.TermStats) *Keywords {
	return &Keywords{stats: stats, avgs: map[string]*tenantLength{}}
}

// Prepare sets the sparse vector of each of a tenant's documents from its
// memory (docs[i] is ms[i]'s) and returns the term rows of the versions.
func (k *Keywords) Prepare(ctx context.Context, tenant string, ms []memory.Memory, docs []memory.VectorDoc) ([]memory.TermRow, error) {
	terms := make([][]string, len(ms))
	var batchLen int64
	for i, m := range ms {
		terms[i] = bm25.Terms(m)
		batchLen += int64(len(terms[i]))
	}
	avg, err := k.average(ctx, tenant, int64(len(ms)), batchLen)
	if err != nil {
		return nil, err
	}
	var rows []memory.TermRow
	for i, m := range ms {
		docs[i].Sparse = bm25.Document(terms[i], avg)
		rows = append(rows, bm25.Rows(m, terms[i])...)
	}
	return rows, nil
}

// average is the tenant's average length counting a batch of n documents
// of total length batchLen about to be written.
func (k *Keywords) average(ctx context.Context, tenant string, n, batchLen int64) (float64, error) {
	k.mu.Lock()
	t := k.avgs[tenant]
	fresh := t != nil && time.Since(t.read) < avgTTL
	k.mu.Unlock()
	if !fresh {
		c, err := k.stats.TermStats(ctx, tenant, nil)
		if err != nil {
			return 0, errorf("index: read term statistics", err)
		}
		t = &tenantLength{docs: c.Docs, length: c.Length, read: time.Now()}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.avgs) >= maxTenantLengths && k.avgs[tenant] == nil {
		clear(k.avgs)
	}
	t.docs += n
	t.length += batchLen
	k.avgs[tenant] = t
	if t.docs == 0 {
		return 0, nil
	}
	return float64(t.length) / float64(t.docs), nil
}

// Write stores term rows.
func (k *Keywords) Write(ctx context.Context, rows []memory.TermRow) error {
	if len(rows) == 0 {
		return nil
	}
	if err := k.stats.PutTermRows(ctx, rows); err != nil {
		return errorf("index: write term statistics", err)
	}
	return nil
}
