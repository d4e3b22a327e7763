package recall

import (
	"context"
	"slices"

	"github.com/hindsight-memory/hindsight/bm25"
	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/memory"
)

// Similar returns the IDs of up to k current memories among those passing
// f that share the most words with text, best BM25 score first. It first
// catches the tenant's cache up with the store, reads the keyword index
// only (no embedding, no vector search) and records no usage.
//
// The merge step uses it next to the vector pre-filter: a lexical embedder
// can score a paraphrase of the same subject ("reports in UTC" / "reports
// should use Beijing time, not UTC") below its threshold, and a memory
// that never reaches the judge can never be merged. The merge reads the
// memories themselves as its batch knows them: a batch's own versions are
// in the index and the cache before they are stored.
func (e *Engine) Similar(ctx context.Context, text string, f memory.VectorFilter, k int) ([]string, error) {
	if err := f.Validate("recall: similar"); err != nil {
		return nil, err
	}
	if e.cfg.Stateless {
		return e.similarStateless(ctx, text, f, k)
	}
	if err := e.Refresh(ctx, f.Tenant); err != nil {
		return nil, err
	}
	c, err := e.cache(ctx, f.Tenant)
	if err != nil {
		return nil, err
	}
	hits, _ := c.searchKeyword(lang.Terms(text), f, nil, k)
	out := make([]string, 0, len(hits))
	for _, h := range hits {
		out = append(out, h.id)
	}
	return out, nil
}

// similarStateless is Similar on a stateless engine: the sparse side of a
// hybrid search, with the statistics read afresh (the merge step must see
// the last write).
func (e *Engine) similarStateless(ctx context.Context, text string, f memory.VectorFilter, k int) ([]string, error) {
	terms := lang.Terms(text)
	counts, err := e.stats.getFresh(ctx, f.Tenant, terms, 0)
	if err != nil {
		return nil, errorf("recall: similar: term statistics", err)
	}
	sparse := bm25.Query(terms, counts)
	if sparse.IsZero() || k <= 0 {
		return nil, nil
	}
	hits, err := e.deps.Index.(memory.HybridSearcher).HybridSearch(ctx, memory.CollectionMemories,
		memory.HybridQuery{Filter: f, Sparse: sparse, PerSide: min(k, memory.MaxHybridPerSide)})
	if err != nil {
		return nil, errorf("recall: similar", err)
	}
	slices.SortFunc(hits, func(a, b memory.HybridHit) int { return a.SparseRank - b.SparseRank })
	ids := make([]string, 0, len(hits))
	for _, h := range hits {
		if h.SparseRank > 0 && len(ids) < k {
			ids = append(ids, h.Doc.ID)
		}
	}
	return ids, nil
}
