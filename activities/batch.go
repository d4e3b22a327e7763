package activities

import (
	"context"
	"slices"

	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
)

// exactStatuses are the statuses an exact repeat merges into. A
// quarantined memory absorbs its exact repeats: they bring no new text,
// and they stay in quarantine with it.
var exactStatuses = []memory.Status{memory.StatusLive, memory.StatusCold, memory.StatusArchived, memory.StatusQuarantined}

// batchState is what one MergeRequests batch knows of a tenant's memories:
// read from the store once, and then kept current by the batch's own
// writes. The ledger is the tenant's one writer, so nothing else changes
// them while the batch runs, and a read it answers returns what the store
// would. It holds every memory whose content hash is one of the batch's
// candidates' (the exact-repeat look-ups of the whole batch in one query),
// and every memory the batch has read by ID or written since.
type batchState struct {
	known map[string]memory.Memory // by ID, current version
}

// readBatch reads, per tenant, the memories the batch's exact-repeat
// look-ups need, in one query.
func (a *Activities) readBatch(ctx context.Context, reqs []ledger.Request) (map[string]*batchState, error) {
	hashes := map[string][]string{}
	for _, req := range reqs {
		if req.Validate() != nil {
			continue // the request fails its validation in the batch
		}
		for _, c := range req.Candidates {
			if req.Op == ledger.OpMerge {
				c = ledger.ClipCandidate(c)
			}
			c = normalizeCandidate(c)
			h := memory.ContentHash(c.Kind, c.Content)
			if !slices.Contains(hashes[req.Tenant], h) {
				hashes[req.Tenant] = append(hashes[req.Tenant], h)
			}
		}
	}
	out := map[string]*batchState{}
	for tenant, hs := range hashes {
		ms, err := a.Store.Memories(ctx, memory.MemoryFilter{Tenant: tenant, ContentHashes: hs, Statuses: exactStatuses})
		if err != nil {
			return nil, err
		}
		b := &batchState{known: map[string]memory.Memory{}}
		b.saw(ms)
		out[tenant] = b
	}
	return out, nil
}

// saw records versions read or written; an older version than one known
// changes nothing.
func (b *batchState) saw(ms []memory.Memory) {
	if b == nil {
		return
	}
	for _, m := range ms {
		if cur, ok := b.known[m.ID]; !ok || m.Version > cur.Version {
			b.known[m.ID] = m
		}
	}
}

// exact is the exact-repeat look-up: the current memories with content
// hash in scope, of an exactStatuses status, in the store's order
// (UpdatedAt, then ID).
func (b *batchState) exact(hash string, scope memory.Scope) []memory.Memory {
	var out []memory.Memory
	for _, m := range b.known {
		if m.ContentHash == hash && m.Scope.Norm() == scope && slices.Contains(exactStatuses, m.Status) {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, memory.CompareUpdated)
	return out
}

// memories is store.Memories for a read by IDs (f.IDs, within f.Scopes):
// the memories the batch knows come from it, the others from the store,
// and are known from then on. Without a batch it reads the store.
func (b *batchState) memories(ctx context.Context, store memory.MemoryStore, f memory.MemoryFilter) ([]memory.Memory, error) {
	if b == nil {
		return store.Memories(ctx, f)
	}
	var missing []string
	for _, id := range f.IDs {
		if _, ok := b.known[id]; !ok && !slices.Contains(missing, id) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		// Unscoped: a memory read is known whatever the scope asked.
		read, err := store.Memories(ctx, memory.MemoryFilter{Tenant: f.Tenant, IDs: missing})
		if err != nil {
			return nil, err
		}
		b.saw(read)
	}
	var out []memory.Memory
	for _, id := range f.IDs {
		m, ok := b.known[id]
		if !ok || (len(f.Scopes) > 0 && !memory.InScopes(m.Scope, f.Scopes)) || slices.ContainsFunc(out, func(o memory.Memory) bool { return o.ID == id }) {
			continue
		}
		out = append(out, m)
	}
	slices.SortFunc(out, memory.CompareUpdated)
	return out, nil
}
