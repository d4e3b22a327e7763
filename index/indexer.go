package index

import (
	"context"
	"fmt"
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
	prev := map[string]memory.Memory{}
	for _, b := range before {
		prev[b.ID] = b
	}
	return x.write(ctx, ms, prev)
}

func (x *Indexer) write(ctx context.Context, ms []memory.Memory, known map[string]memory.Memory) error {
	const op = "index: write memories"
	if len(ms) == 0 {
		return nil
	}
	if err := memory.ValidateMemories(op, ms); err != nil {
		return err
	}
	// The current version of each memory, by tenant.
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
	// What was stored and indexed before this write decides what needs
	// embedding; read it before the store changes.
	tenants := make([]string, 0, len(latest))
	for t := range latest {
		tenants = append(tenants, t)
	}
	slices.Sort(tenants)

	plans := map[string]indexPlan{}
	if x.deps.Index != nil {
		for _, tenant := range tenants {
			p, err := x.plan(ctx, tenant, latest[tenant], known)
			if err != nil {
				return err
			}
			plans[tenant] = p
		}
	}
	if err := x.deps.Memories.PutMemories(ctx, ms); err != nil {
		return errorf(op, err)
	}
	for _, tenant := range tenants {
		p, ok := plans[tenant]
		if !ok {
			continue
		}
		if err := x.embed(ctx, p.docs, p.embed, latest[tenant]); err != nil {
			return err
		}
		if err := x.AddKeywords(ctx, tenant, p.mems(latest[tenant]), p.docs); err != nil {
			return err
		}
		if err := x.deps.Index.Upsert(ctx, memory.CollectionMemories, p.docs); err != nil {
			return errorf(op, err)
		}
	}
	if x.deps.Cache != nil {
		for _, tenant := range tenants {
			cur := make([]memory.Memory, 0, len(latest[tenant]))
			for _, m := range latest[tenant] {
				cur = append(cur, m)
			}
			x.deps.Cache.Observe(tenant, cur)
		}
	}
	return nil
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
// indexer keeps keywords; the reindex calls it too. Call it after the
// versions are stored and before the documents are upserted: a retry
// writes the same rows again.
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
