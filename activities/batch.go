package activities

import (
	"context"
	"fmt"
	"maps"
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
// every memory the candidates' neighbour searches found before the batch
// began (warm), and every memory the batch has read by ID or written since.
type batchState struct {
	known map[string]memory.Memory // by ID, current version
	// vectors are the candidates' embeddings, by embedded text, computed
	// for the whole batch in one call (warm).
	vectors map[string][]float32
}

// warmed is what warm found before the batch began: the candidates'
// embeddings, and the memories their neighbour searches found, by tenant.
type warmed struct {
	vectors map[string][]float32
	found   map[string][]memory.Memory
}

// warm prepares the batch's neighbour look-ups in the background: it embeds
// every valid candidate in one call, searches each one's neighbours as the
// index has them now, and reads the memories found in one query per tenant.
// Each candidate still searches its neighbours when its turn comes (the
// batch's earlier decisions may have changed them), but then finds them
// known, where it would have read them from the store. What it cannot do is
// left to that turn: the channel gets what was done, and errors are not
// reported here (the turn that needs the step meets them again).
func (a *Activities) warm(ctx context.Context, reqs []ledger.Request) <-chan warmed {
	type look struct {
		tenant string
		c      memory.Candidate
		text   string
	}
	var looks []look
	var texts []string
	for _, req := range reqs {
		if req.Validate() != nil {
			continue
		}
		for i := range req.Candidates {
			c := normalizeCandidate(req.Merged(i))
			if ledger.ValidateCandidate(c) != nil {
				continue
			}
			text := candidateText(c)
			looks = append(looks, look{req.Tenant, c, text})
			if !slices.Contains(texts, text) {
				texts = append(texts, text)
			}
		}
	}
	out := make(chan warmed, 1)
	go func() {
		w := warmed{vectors: map[string][]float32{}, found: map[string][]memory.Memory{}}
		defer func() { out <- w }()
		for part := range slices.Chunk(texts, embedBatch) {
			vecs, err := a.Embedder.Embed(ctx, part)
			if err != nil || len(vecs) != len(part) {
				return
			}
			for i, text := range part {
				w.vectors[text] = vecs[i]
			}
		}
		ids := map[string][]string{}
		for _, l := range looks {
			similar, err := a.similar(ctx, l.tenant, l.c, w.vectors[l.text])
			if err != nil {
				return
			}
			for _, id := range similar.ids() {
				if !slices.Contains(ids[l.tenant], id) {
					ids[l.tenant] = append(ids[l.tenant], id)
				}
			}
		}
		for tenant, want := range ids {
			// Unscoped, as batchState.memories reads: a memory read is known
			// whatever the scope asked.
			ms, err := a.Store.Memories(ctx, memory.MemoryFilter{Tenant: tenant, IDs: want})
			if err != nil {
				return
			}
			w.found[tenant] = ms
		}
	}()
	return out
}

// embedBatch bounds the texts of one Embed call.
const embedBatch = 64

// candidateText is the text of a candidate that is embedded.
func candidateText(c memory.Candidate) string {
	return memory.EmbedText(memory.Memory{Content: c.Content, CounterExample: c.CounterExample})
}

// embedding is the embedding of text: the batch's, or the embedder's.
func (b *batchState) embedding(ctx context.Context, e memory.Embedder, text string) ([]float32, error) {
	if b != nil {
		if v, ok := b.vectors[text]; ok {
			return v, nil
		}
	}
	vecs, err := e.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	if len(vecs) != 1 {
		return nil, fmt.Errorf("embedder returned %d vectors for 1 text", len(vecs))
	}
	return vecs[0], nil
}

// readBatch reads, per tenant, the memories the batch's exact-repeat
// look-ups need, in one query.
func (a *Activities) readBatch(ctx context.Context, reqs []ledger.Request) (map[string]*batchState, error) {
	hashes := map[string][]string{}
	for _, req := range reqs {
		if req.Validate() != nil {
			continue // the request fails its validation in the batch
		}
		for i := range req.Candidates {
			c := normalizeCandidate(req.Merged(i))
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

// stager indexes memory versions before they are stored, and stores them
// later (index.Indexer.Stage, Store, Unstage).
type stager interface {
	Stage(ctx context.Context, ms, before []memory.Memory) error
	Store(ctx context.Context, ms []memory.Memory) error
	Unstage(tenant string)
}

// batchWrites are the writes of one MergeRequests batch. Each decision is
// staged as the batch makes it: its versions go to the vector index and
// the recall cache at once (the next candidate's neighbours are searched
// there), and are kept, with the decision, for flush. flush then writes
// them all in two writes where applying them one by one took two per
// decision: the decisions first, in one insert, then their versions, in
// another.
//
// The decision log is thus the batch's write-ahead record. A batch cut
// short between the two writes left decisions logged whose versions are not
// stored; its retry finds them logged, replays them, and stores the
// missing versions from the log first (redo), so nothing is decided or
// applied twice. Cut short before the first, it logged nothing, and its
// retry decides again from the store; what it staged only in the index is
// dropped by readers (the store says what each memory is) and rewritten
// by the retry.
type batchWrites struct {
	ix        stager
	log       decisionAppender
	decisions []memory.Decision
	versions  []memory.Memory
}

// batchWriter returns the writer of a batch, or nil (write each decision at
// once) when the indexer cannot stage or the store cannot log decisions in
// one write.
func (a *Activities) batchWriter() *batchWrites {
	ix, ok := a.Indexer.(stager)
	log, ok2 := a.Store.(decisionAppender)
	if !ok || !ok2 {
		return nil
	}
	return &batchWrites{ix: ix, log: log}
}

// stage is applyPlanned for a batch: it checks d against read, the state
// it was planned from, and stages it.
func (w *batchWrites) stage(ctx context.Context, d memory.Decision, read map[string]memory.Memory) (memory.Decision, error) {
	if err := verifyPlanned(d, read); err != nil {
		return memory.Decision{}, err
	}
	if len(d.After) > 0 {
		if err := w.ix.Stage(ctx, d.After, slices.Collect(maps.Values(read))); err != nil {
			return memory.Decision{}, temporalError(fmt.Errorf("write decision %s: %w", d.ID, err))
		}
	}
	w.decisions = append(w.decisions, d)
	w.versions = append(w.versions, d.After...)
	return d, nil
}

// flush writes what was staged: the decisions, then their versions. If it
// fails, the caches forget what they were shown (Unstage) and the batch's
// retry takes it from the log.
func (w *batchWrites) flush(ctx context.Context) error {
	if w == nil || len(w.decisions) == 0 {
		return nil
	}
	if err := w.log.AppendDecisions(ctx, w.decisions); err != nil {
		w.unstage()
		return fmt.Errorf("log %d decisions: %w", len(w.decisions), err)
	}
	if err := w.ix.Store(ctx, w.versions); err != nil {
		w.unstage()
		return fmt.Errorf("store the versions of %d decisions: %w", len(w.decisions), err)
	}
	w.decisions, w.versions = nil, nil
	return nil
}

func (w *batchWrites) unstage() {
	var done []string
	for _, d := range w.decisions {
		if !slices.Contains(done, d.Tenant) {
			w.ix.Unstage(d.Tenant)
			done = append(done, d.Tenant)
		}
	}
}

// SettleInput names the decisions of a tenant's merge batches that failed
// for good (workflows.MemoryLedger): each may be logged or not.
type SettleInput struct {
	Tenant      string   `json:"tenant"`
	DecisionIDs []string `json:"decision_ids"`
}

// Settle stores the versions of those of in.DecisionIDs that are logged
// and whose versions the store lacks (redo): a merge batch that failed
// for good between its two writes (batchWrites) left them so. The ledger
// settles them before its next request, so that nothing is decided from a
// state without them; a retry of one of those requests would otherwise
// replay a decision on a version that another decision has taken since.
func (a *Activities) Settle(ctx context.Context, in SettleInput) error {
	if err := memory.ValidateTenant("settle", in.Tenant); err != nil {
		return temporalError(err)
	}
	logged, err := a.logged(ctx, map[string][]string{in.Tenant: in.DecisionIDs})
	if err != nil {
		return temporalError(err)
	}
	if _, err := a.redo(ctx, logged); err != nil {
		return temporalError(err)
	}
	return nil
}

// redo stores the versions of logged decisions that the store lacks: a
// batch cut short after logging its decisions and before storing their
// versions (batchWrites). The log holds every version; storing one again
// changes nothing, and a memory the store holds at that version or a later
// one is left as it is. It reports whether it stored any.
func (a *Activities) redo(ctx context.Context, logged map[string]memory.Decision) (bool, error) {
	redone := false
	byTenant := map[string][]memory.Memory{}
	for _, id := range slices.Sorted(maps.Keys(logged)) {
		d := logged[id]
		byTenant[d.Tenant] = append(byTenant[d.Tenant], d.After...)
	}
	for _, tenant := range slices.Sorted(maps.Keys(byTenant)) {
		ms := byTenant[tenant]
		var ids []string
		for _, m := range ms {
			if !slices.Contains(ids, m.ID) {
				ids = append(ids, m.ID)
			}
		}
		if len(ids) == 0 {
			continue
		}
		stored, err := a.Store.Memories(ctx, memory.MemoryFilter{Tenant: tenant, IDs: ids, NoUsage: true})
		if err != nil {
			return redone, err
		}
		have := map[string]int{}
		for _, m := range stored {
			have[m.ID] = m.Version
		}
		var missing []memory.Memory
		for _, m := range ms {
			if v, ok := have[m.ID]; !ok || v < m.Version {
				missing = append(missing, m)
			}
		}
		if len(missing) == 0 {
			continue
		}
		if err := a.Indexer.Write(ctx, missing); err != nil {
			return redone, fmt.Errorf("store the versions of logged decisions: %w", err)
		}
		redone = true
	}
	return redone, nil
}
