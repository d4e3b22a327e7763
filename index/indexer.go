package index

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/hindsight-memory/hindsight/memory"
)

// Cache is a reader's cache of current versions in this process (the
// recall engine): the indexer tells it what it wrote, so the reader sees
// its own process's writes at once.
type Cache interface {
	// Observe applies versions written in this process.
	Observe(tenant string, ms []memory.Memory)
	// Forget drops memories.
	Forget(tenant string, ids []string)
}

// Deps are what an Indexer writes to.
type Deps struct {
	// Memories is the system of record. Required.
	Memories memory.MemoryStore
	// Index and Embedder are the vector side. Optional together.
	Index    memory.VectorIndex
	Embedder memory.Embedder
	// Cache, when set, sees the written versions at once.
	Cache Cache
	// Keywords, when set, gives the vector documents sparse keyword
	// vectors and keeps the term statistics recall weighs queries by: for
	// an index searched by hybrid search.
	Keywords *Keywords
}

// Indexer is the one write path for memory versions already decided by the
// merge step: it stores them in the system of record, embeds the current
// version of each memory when its text is new or changed (reusing the
// stored vector otherwise), upserts its vector document, and updates the
// engine's keyword cache. Write is idempotent, so an activity may retry it.
type Indexer struct {
	deps  Deps
	batch int
}

// New returns an Indexer. embedBatch bounds the texts per Embed call (0
// means 64).
func New(deps Deps, embedBatch int) (*Indexer, error) {
	if deps.Memories == nil {
		return nil, memory.Invalidf("index: indexer", "a MemoryStore is required")
	}
	if (deps.Index == nil) != (deps.Embedder == nil) {
		return nil, memory.Invalidf("index: indexer", "give both a vector index and an embedder, or neither")
	}
	if deps.Keywords != nil && deps.Index == nil {
		return nil, memory.Invalidf("index: indexer", "keyword vectors need a vector index to live in")
	}
	if embedBatch <= 0 {
		embedBatch = 64
	}
	return &Indexer{deps: deps, batch: embedBatch}, nil
}

// Write stores memory versions everywhere they live. Versions of several
// memories and tenants may be mixed; only the highest version of each
// memory in the batch is indexed. Invalid versions return EINVALID and
// nothing is written.
func (x *Indexer) Write(ctx context.Context, ms []memory.Memory) error {
	return x.write(ctx, ms, nil)
}

// WriteAfter is Write for a caller that knows what the store holds of
// these memories: before are their stored versions, and a memory not in
// before is not stored (the ledger, which has just read them to plan the
// change). It saves reading them again.
func (x *Indexer) WriteAfter(ctx context.Context, ms, before []memory.Memory) error {
	return x.write(ctx, ms, byID(before))
}

// byID keys memories by ID.
func byID(ms []memory.Memory) map[string]memory.Memory {
	out := make(map[string]memory.Memory, len(ms))
	for _, m := range ms {
		out[m.ID] = m
	}
	return out
}

func (x *Indexer) write(ctx context.Context, ms []memory.Memory, known map[string]memory.Memory) error {
	w, err := x.prepare(ctx, ms, known)
	if err != nil || w == nil {
		return err
	}
	if err := x.deps.Memories.PutMemories(ctx, ms); err != nil {
		return errorf("index: write memories", err)
	}
	if err := w.index(ctx); err != nil {
		return err
	}
	x.observe(w.latest)
	return nil
}

// Stage is WriteAfter without the system of record: it indexes the
// versions (their vector documents and keyword rows) and shows them to the
// cache now, and leaves storing them to the caller, who stores what it
// staged with Store. The ledger stages each decision of a batch as it makes
// it, so the next decision's search finds it, and stores the batch's
// versions in one write at the end. A caller that cannot store what it
// staged calls Unstage. The index is derived from the store (a reindex
// reconciles it), so a document staged and never stored is dropped by
// readers, which take each memory's state from the store.
func (x *Indexer) Stage(ctx context.Context, ms, before []memory.Memory) error {
	w, err := x.prepare(ctx, ms, byID(before))
	if err != nil || w == nil {
		return err
	}
	if err := w.index(ctx); err != nil {
		return err
	}
	x.observe(w.latest)
	return nil
}

// Store writes staged versions to the system of record, and tells the
// cache again: a cache that counts the store's writes follows it only once
// they are stored.
func (x *Indexer) Store(ctx context.Context, ms []memory.Memory) error {
	const op = "index: store memories"
	if len(ms) == 0 {
		return nil
	}
	if err := memory.ValidateMemories(op, ms); err != nil {
		return err
	}
	if err := x.deps.Memories.PutMemories(ctx, ms); err != nil {
		return errorf(op, err)
	}
	x.observe(latestByTenant(ms))
	return nil
}

// Unstage makes the cache forget a tenant whose staged versions could not
// be stored: it reads the tenant afresh from the store when next asked.
func (x *Indexer) Unstage(tenant string) {
	if inv, ok := x.deps.Cache.(interface{ Invalidate(tenant string) }); ok {
		inv.Invalidate(tenant)
	}
}

// pendingWrite is a write of memory versions, planned: what needs
// embedding was decided from what was stored and indexed before it.
type pendingWrite struct {
	x       *Indexer
	latest  map[string]map[string]memory.Memory // the current version of each memory, by tenant
	tenants []string                            // sorted
	plans   map[string]indexPlan
}

// latestByTenant is the highest version of each memory in ms, by tenant.
func latestByTenant(ms []memory.Memory) map[string]map[string]memory.Memory {
	latest := map[string]map[string]memory.Memory{}
	for _, m := range ms {
		t := latest[m.Tenant]
		if t == nil {
			t = map[string]memory.Memory{}
			latest[m.Tenant] = t
		}
		if cur, ok := t[m.ID]; !ok || m.Version > cur.Version {
			t[m.ID] = m
		}
	}
	return latest
}

// prepare validates ms and plans their indexing, reading what was stored
// and indexed before the store changes; nil for nothing to write.
func (x *Indexer) prepare(ctx context.Context, ms []memory.Memory, known map[string]memory.Memory) (*pendingWrite, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	if err := memory.ValidateMemories("index: write memories", ms); err != nil {
		return nil, err
	}
	w := &pendingWrite{x: x, latest: latestByTenant(ms), plans: map[string]indexPlan{}}
	for t := range w.latest {
		w.tenants = append(w.tenants, t)
	}
	slices.Sort(w.tenants)
	if x.deps.Index != nil {
		for _, tenant := range w.tenants {
			p, err := x.plan(ctx, tenant, w.latest[tenant], known)
			if err != nil {
				return nil, err
			}
			w.plans[tenant] = p
		}
	}
	return w, nil
}

// index embeds what needs it, writes the keyword rows and upserts the
// vector documents.
func (w *pendingWrite) index(ctx context.Context) error {
	for _, tenant := range w.tenants {
		p, ok := w.plans[tenant]
		if !ok {
			continue
		}
		if err := w.x.embed(ctx, p.docs, p.embed, w.latest[tenant]); err != nil {
			return err
		}
		if err := w.x.AddKeywords(ctx, tenant, p.mems(w.latest[tenant]), p.docs); err != nil {
			return err
		}
		if err := w.x.deps.Index.Upsert(ctx, memory.CollectionMemories, p.docs); err != nil {
			return errorf("index: write memories", err)
		}
	}
	return nil
}

// observe tells the cache the current versions written, by tenant.
func (x *Indexer) observe(latest map[string]map[string]memory.Memory) {
	if x.deps.Cache == nil {
		return
	}
	for tenant, cur := range latest {
		x.deps.Cache.Observe(tenant, slices.Collect(maps.Values(cur)))
	}
}

type indexPlan struct {
	docs  []memory.VectorDoc
	embed []int
}

// mems are the memories of the plan's documents, in their order.
func (p indexPlan) mems(cur map[string]memory.Memory) []memory.Memory {
	out := make([]memory.Memory, len(p.docs))
	for i, d := range p.docs {
		out[i] = cur[d.ID]
	}
	return out
}

// AddKeywords gives a tenant's documents (docs[i] is ms[i]'s) their sparse
// keyword vectors and writes the versions' term statistics, when the
// indexer keeps keywords; the reindex calls it too. Call it before the
// documents are upserted: a retry writes the same rows again. (A staged
// write, Stage, writes them before the versions are stored.)
func (x *Indexer) AddKeywords(ctx context.Context, tenant string, ms []memory.Memory, docs []memory.VectorDoc) error {
	if x.deps.Keywords == nil || len(docs) == 0 {
		return nil
	}
	rows, err := x.deps.Keywords.Prepare(ctx, tenant, ms, docs)
	if err != nil {
		return err
	}
	return x.deps.Keywords.Write(ctx, rows)
}

// plan builds the vector documents of a tenant's current versions and says
// which need embedding. A stored vector is reused when the index holds the
// vector of the version the store holds (same UpdatedAt) and that
// version's text equals the new one, or when the index already holds this
// very version (a retry).
func (x *Indexer) plan(ctx context.Context, tenant string, cur, known map[string]memory.Memory) (indexPlan, error) {
	const op = "index: write memories"
	ids := make([]string, 0, len(cur))
	for id := range cur {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	prev := known
	if prev == nil {
		stored, err := x.deps.Memories.Memories(ctx, memory.MemoryFilter{Tenant: tenant, IDs: ids, NoUsage: true})
		if err != nil {
			return indexPlan{}, errorf(op, err)
		}
		prev = make(map[string]memory.Memory, len(stored))
		for _, m := range stored {
			prev[m.ID] = m
		}
	}
	indexed, err := x.deps.Index.Get(ctx, memory.CollectionMemories, tenant, ids)
	if err != nil {
		return indexPlan{}, errorf(op, err)
	}
	vecs := make(map[string]memory.VectorDoc, len(indexed))
	for _, d := range indexed {
		vecs[d.ID] = d
	}
	var p indexPlan
	for _, id := range ids {
		m := cur[id]
		doc := memory.VectorDocOf(m, nil)
		old, have := vecs[id]
		pm, stored := prev[id]
		reuse := have && len(old.Vector) == x.deps.Embedder.Dim() &&
			(old.UpdatedAt.Equal(m.UpdatedAt) ||
				stored && old.UpdatedAt.Equal(pm.UpdatedAt) && memory.EmbedText(pm) == memory.EmbedText(m))
		if reuse {
			doc.Vector = old.Vector
		} else {
			p.embed = append(p.embed, len(p.docs))
		}
		p.docs = append(p.docs, doc)
	}
	return p, nil
}

// embed fills the vectors of docs[i] for i in need, in batches.
func (x *Indexer) embed(ctx context.Context, docs []memory.VectorDoc, need []int, cur map[string]memory.Memory) error {
	for start := 0; start < len(need); start += x.batch {
		part := need[start:min(start+x.batch, len(need))]
		texts := make([]string, len(part))
		for i, j := range part {
			texts[i] = memory.EmbedText(cur[docs[j].ID])
		}
		vecs, err := x.deps.Embedder.Embed(ctx, texts)
		if err != nil {
			return errorf("index: embed memories", err)
		}
		if len(vecs) != len(texts) {
			return memory.Invalidf("index: embed memories", "embedder returned %d vectors for %d texts", len(vecs), len(texts))
		}
		for i, j := range part {
			docs[j].Vector = vecs[i]
		}
	}
	return nil
}

// Remove deletes memories from the vector index and the engine's cache
// (the system of record is the forget workflow's business). Unknown IDs are
// ignored.
func (x *Indexer) Remove(ctx context.Context, tenant string, ids []string) error {
	if err := memory.ValidateTenant("index: remove memories", tenant); err != nil {
		return err
	}
	if x.deps.Index != nil {
		if err := x.deps.Index.Delete(ctx, memory.CollectionMemories, tenant, ids); err != nil {
			return errorf("index: remove memories", err)
		}
	}
	if x.deps.Cache != nil {
		x.deps.Cache.Forget(tenant, ids)
	}
	return nil
}

func errorf(op string, err error) error { return fmt.Errorf("%s: %w", op, err) }
