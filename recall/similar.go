package recall

import (
	"context"

	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/memory"
)

// Similar returns up to k current memories among those passing f that
// share the most words with text, best BM25 score first. It first catches
// the tenant's cache up with the store, reads the keyword index only (no
// embedding, no vector search) and records no usage.
//
// The merge step uses it next to the vector pre-filter: a lexical embedder
// can score a paraphrase of the same subject ("reports in UTC" / "reports
// should use Beijing time, not UTC") below its threshold, and a memory
// that never reaches the judge can never be merged.
func (e *Engine) Similar(ctx context.Context, text string, f memory.VectorFilter, k int) ([]memory.Memory, error) {
	if err := f.Validate("recall: similar"); err != nil {
		return nil, err
	}
	if err := e.Refresh(ctx, f.Tenant); err != nil {
		return nil, err
	}
	c, err := e.cache(ctx, f.Tenant)
	if err != nil {
		return nil, err
	}
	hits, _ := c.searchKeyword(lang.Terms(text), f, nil, k)
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]memory.Memory, 0, len(hits))
	for _, h := range hits {
		if en := c.entries[h.id]; en != nil {
			out = append(out, en.mem.Clone())
		}
	}
	return out, nil
}
