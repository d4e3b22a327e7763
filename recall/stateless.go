package recall

import (
	"context"
	"slices"
	"strings"

	"github.com/hindsight-memory/hindsight/index/bm25"
	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/lang/lexicon"
	"github.com/hindsight-memory/hindsight/memory"
)

// Stateless recall (Config.Stateless) is production's: any replica
// answers any tenant's recall at once, and holds nothing of a tenant but
// its term statistics for StatsTTL. A recall
//
//  1. reads the term statistics of the query's words, entities and task
//     types (memory.TermStats, one query, cached for StatsTTL): they parse
//     the hints and weigh the query's sparse vector (bm25.Query);
//  2. runs one hybrid search over the index's dense and sparse vectors,
//     with the filters: each candidate comes back with both scores and
//     the scalar fields the rerank needs;
//  3. fuses and reranks the candidates exactly as the cached path does,
//     from those fields;
//  4. reads the candidates from the store by ID, in one read (at most
//     2·max(VectorCandidates, KeywordCandidates) of them, whatever the
//     tenant's size): their current versions (whatever the index's lag),
//     what their relevance and quoted-phrase hints are computed from, and
//     what is returned.
//
// With a context window (Config.Context, off by default) a memory borrows
// relevance from its neighbours in a source episode, which the index does
// not order: the recall then reads every candidate and the other
// memories of their source episodes from the store (two reads) and ranks
// them exactly as the cached path does (rank over a neighbourhood).
//
// What the cached path does that this one does not: a time boost under
// RRF ranks the in-range candidates of the one search instead of
// searching the range again; the query LLM is not told the tenant's task
// types.

// hybridCandidate is a hybrid hit with its rerank signals.
type hybridCandidate struct {
	hit memory.HybridHit
	b   memory.ScoreBreakdown
}

func (e *Engine) recallStateless(ctx context.Context, q memory.Query) (Response, error) {
	q, err := e.validateQuery(q)
	if err != nil {
		return Response{}, err
	}
	x := expandQuery(e.deps.Lexicon, q.Text)
	counts, err := e.stats.get(ctx, q.Tenant, statsKeys(q.Text, e.deps.Lexicon, x))
	if err != nil {
		return Response{}, errorf("recall: term statistics", err)
	}
	parsed := e.understand(ctx, q, statsVocab{counts})
	f, tf := e.filters(q, &parsed)
	if parsed.Text != q.Text {
		x = expandQuery(e.deps.Lexicon, parsed.Text)
	}
	hits, err := e.hybrid(ctx, parsed.Text, x, f, counts)
	if err != nil {
		return Response{}, err
	}
	if parsed.TimeUse == string(TimeFilter) && !slices.ContainsFunc(hits, matched) {
		// As on the cached path: a range read from the text that holds
		// nothing is dropped, and the expression's words count again.
		f.CreatedAfter, f.CreatedBefore = q.Since, q.Until
		parsed.TimeUse = timeFilterEmpty
		parsed.Text = q.Text
		x = expandQuery(e.deps.Lexicon, parsed.Text)
		if hits, err = e.hybrid(ctx, parsed.Text, x, f, counts); err != nil {
			return Response{}, err
		}
	}
	var results []memory.Result
	var pols []polarity
	if e.cfg.Context > 0 {
		nb, err := e.readNeighbourhood(ctx, q.Tenant, hits, counts)
		if err != nil {
			return Response{}, err
		}
		vec, kw, kwIn := hybridLists(hits, tf)
		results, pols = e.rank(nb, q, parsed, x, f, tf, vec, kw, kwIn)
	} else {
		cands := e.fuseHybrid(q, parsed, hits, tf)
		if results, pols, err = e.readBest(ctx, q, parsed, x, f, counts, cands); err != nil {
			return Response{}, err
		}
	}
	return e.respond(ctx, q, parsed, results, pols, nil), nil
}

// matched reports whether a hybrid hit has anything in common with the
// query: a shared term, or a positive cosine.
func matched(h memory.HybridHit) bool {
	return h.SparseRank > 0 || (h.DenseRank > 0 && h.Dense > 0)
}

// hybrid runs the one hybrid search of a recall for text.
func (e *Engine) hybrid(ctx context.Context, text string, x expansion, f memory.VectorFilter, counts memory.TermCounts) ([]memory.HybridHit, error) {
	hq := memory.HybridQuery{
		Filter:      f,
		Sparse:      bm25.Query(append(lang.Terms(text), x.crossTerms()...), counts),
		PerSide:     max(e.cfg.VectorCandidates, e.cfg.KeywordCandidates),
		DenseWeight: e.cfg.VectorShare,
	}
	vecs, err := e.deps.Embedder.Embed(ctx, []string{text})
	if err != nil {
		return nil, errorf("recall: embed query", err)
	}
	if len(vecs) != 1 {
		return nil, memory.Invalidf("recall: embed query", "embedder returned %d vectors for 1 text", len(vecs))
	}
	hq.Dense = vecs[0]
	hits, err := e.deps.Index.(memory.HybridSearcher).HybridSearch(ctx, memory.CollectionMemories, hq)
	if err != nil {
		return nil, errorf("recall: hybrid search", err)
	}
	return hits, nil
}

// fuseHybrid fuses the two sides' lists as the cached path does (rank)
// and scores each candidate from the index's fields, best first.
func (e *Engine) fuseHybrid(q memory.Query, parsed Parsed, hits []memory.HybridHit, tf *memory.VectorFilter) []hybridCandidate {
	byID := make(map[string]memory.HybridHit, len(hits))
	var dense, sparse []memory.HybridHit
	for _, h := range hits {
		byID[h.Doc.ID] = h
		if h.DenseRank > 0 && h.Dense > 0 && h.DenseRank <= e.cfg.VectorCandidates {
			dense = append(dense, h)
		}
		if h.SparseRank > 0 && h.SparseRank <= e.cfg.KeywordCandidates {
			sparse = append(sparse, h)
		}
	}
	slices.SortFunc(dense, func(a, b memory.HybridHit) int { return a.DenseRank - b.DenseRank })
	slices.SortFunc(sparse, func(a, b memory.HybridHit) int { return a.SparseRank - b.SparseRank })
	list := func(hs []memory.HybridHit, score func(memory.HybridHit) float64, keep func(memory.HybridHit) bool) ranked {
		var r ranked
		for _, h := range hs {
			if keep == nil || keep(h) {
				r.add(h.Doc.ID, score(h))
			}
		}
		return r
	}
	denseScore := func(h memory.HybridHit) float64 { return h.Dense }
	sparseScore := func(h memory.HybridHit) float64 { return h.Sparse }
	vs := e.cfg.VectorShare
	lists := []ranked{list(dense, denseScore, nil), list(sparse, sparseScore, nil)}
	lists[0].weight, lists[1].weight = vs, 1-vs
	if tf != nil && e.cfg.Fusion == FusionRRF {
		in := func(h memory.HybridHit) bool { return tf.Match(h.Doc) }
		r := []ranked{list(dense, denseScore, in), list(sparse, sparseScore, in)}
		r[0].weight, r[1].weight = vs*timeBoostShare, (1-vs)*timeBoostShare
		lists = append(lists, r...)
	}
	var fused map[string]float64
	if e.cfg.Fusion == FusionWeighted {
		fused = fuseWeighted(lists)
	} else {
		fused = fuseRRF(lists, e.cfg.RRFK)
	}
	maxSparse := 0.0
	for _, h := range sparse {
		maxSparse = max(maxSparse, h.Sparse)
	}
	hints := len(parsed.Entities) > 0 || parsed.TaskType != "" || len(parsed.Phrases) > 0
	out := make([]hybridCandidate, 0, len(fused))
	for id, rel := range fused {
		h := byID[id]
		if tf != nil && e.cfg.Fusion == FusionWeighted {
			in := 0.0
			if tf.Match(h.Doc) {
				in = 1
			}
			rel = (rel + timeBoostShare*in) / (1 + timeBoostShare)
		}
		c := hybridCandidate{hit: h}
		c.b.Fused = rel
		if h.DenseRank > 0 && h.Dense > 0 {
			c.b.Similarity = h.Dense
		}
		if maxSparse > 0 && h.SparseRank > 0 {
			c.b.Keyword = h.Sparse / maxSparse
		}
		if hints && e.cfg.HintBoost > 0 {
			// Entities and the task type are index fields; quoted phrases
			// are checked once the text is read (readBest).
			hit := 0.0
			if docCarriesHint(h.Doc, parsed) {
				hit = 1
			}
			c.b.Fused = (c.b.Fused + e.cfg.HintBoost*hit) / (1 + e.cfg.HintBoost)
		}
		e.rerank(&c.b, memoryOfDoc(h.Doc))
		out = append(out, c)
	}
	sortCandidates(out)
	return out
}

// memoryOfDoc is what the rerank reads of a memory, from its document.
func memoryOfDoc(d memory.VectorDoc) memory.Memory {
	return memory.Memory{ID: d.ID, Status: memory.Status(d.Status), Confidence: d.Confidence,
		CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt, RecallCount: d.RecallCount}
}

// rerank fills a breakdown's recency, confidence, usage and final score
// from m.
func (e *Engine) rerank(b *memory.ScoreBreakdown, m memory.Memory) {
	w := e.cfg.Weights
	b.Recency = recency(m, e.deps.Clock(), e.cfg.RecencyHalfLife)
	b.Confidence = clamp01(m.Confidence)
	b.Usage = float64(m.RecallCount) / float64(m.RecallCount+e.cfg.UsageHalf)
	b.Final = w.Relevance*b.Fused + w.Recency*b.Recency + w.Confidence*b.Confidence + w.Usage*b.Usage
}

// sortCandidates orders candidates as the cached path orders results:
// superseded ones last, then by final score, then by ID.
func sortCandidates(cs []hybridCandidate) {
	superseded := func(c hybridCandidate) bool { return c.hit.Doc.Status == string(memory.StatusSuperseded) }
	slices.SortFunc(cs, func(a, b hybridCandidate) int {
		return compareRanked(superseded(a), superseded(b), a.b.Final, b.b.Final, a.hit.Doc.ID, b.hit.Doc.ID)
	})
}

// docCarriesHint is carriesHint on the index's fields: a hinted entity or
// the task type.
func docCarriesHint(d memory.VectorDoc, p Parsed) bool {
	if p.TaskType != "" && d.TaskType == p.TaskType {
		return true
	}
	for _, h := range p.Entities {
		if slices.Contains(d.Entities, h) {
			return true
		}
	}
	return false
}

// readBest reads the candidates' current versions, with their usage, from
// the store in one read by ID, and returns the best TopK of those relevant
// enough, ranked, with their polarities.
func (e *Engine) readBest(ctx context.Context, q memory.Query, parsed Parsed, x expansion, f memory.VectorFilter,
	counts memory.TermCounts, cands []hybridCandidate) ([]memory.Result, []polarity, error) {
	if len(cands) == 0 {
		return nil, nil, nil
	}
	rq := relevanceTerms(parsed.Text, e.deps.Lexicon, x)
	df := func(t string) int64 { return counts.Terms[t].Docs }
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.hit.Doc.ID
	}
	ms, err := e.deps.Memories.Memories(ctx, memory.MemoryFilter{Tenant: q.Tenant, IDs: ids})
	if err != nil {
		return nil, nil, errorf("recall: read the candidates", err)
	}
	mems := make(map[string]memory.Memory, len(ms))
	for _, m := range ms {
		mems[m.ID] = m
	}
	var kept []hybridCandidate
	for _, c := range cands {
		m, ok := mems[c.hit.Doc.ID]
		if !ok {
			continue // purged since the index was written
		}
		doc := memory.VectorDocOf(m, nil)
		if !f.Match(doc) {
			continue // the index lags the store: the current version no longer qualifies
		}
		c.b.Relevance = coverageOf(rq, distinct(bm25.Terms(m)), counts.Docs, df)
		if e.cfg.VectorRelevance {
			c.b.Relevance = max(c.b.Relevance, vectorRelevance(c.b.Similarity))
		}
		c.b.Relevant = c.b.Relevance >= e.cfg.MinRelevance
		if e.cfg.MinRelevance >= 0 && !c.b.Relevant {
			continue
		}
		if len(parsed.Phrases) > 0 && e.cfg.HintBoost > 0 && !docCarriesHint(doc, parsed) && carriesPhrase(m, parsed) {
			c.b.Fused = (c.b.Fused*(1+e.cfg.HintBoost) + e.cfg.HintBoost) / (1 + e.cfg.HintBoost)
		}
		c.hit.Doc = doc
		e.rerank(&c.b, m)
		kept = append(kept, c)
	}
	sortCandidates(kept)
	kept = kept[:min(len(kept), q.TopK)]
	results := make([]memory.Result, len(kept))
	pols := make([]polarity, len(kept))
	for i, c := range kept {
		m := mems[c.hit.Doc.ID]
		if !slices.Contains(m.Flags, memory.FlagInstructionLike) && memory.InstructionLike(memory.EmbedText(m)) {
			m.Flags = append(m.Flags, memory.FlagInstructionLike)
		}
		results[i] = memory.Result{Memory: m, Score: c.b.Final, Breakdown: c.b}
		pols[i] = polarityOf(m.Content)
	}
	return results, pols, nil
}

// carriesPhrase reports whether a memory's content contains a phrase the
// query quotes or a file name it names.
func carriesPhrase(m memory.Memory, p Parsed) bool {
	text := lang.Fold(m.Content)
	for _, ph := range p.Phrases {
		if strings.Contains(text, ph) {
			return true
		}
	}
	return false
}

func distinct(terms []string) []string {
	slices.Sort(terms)
	return slices.Compact(terms)
}

// statsKeys are the term statistics a stateless recall of text needs: its
// terms and their translations (the sparse query), its units of meaning
// (relevance), and every phrase of it that could be an entity or a task
// type (hints).
func statsKeys(text string, lx *lexicon.Lexicon, x expansion) []string {
	keys := append(lang.Terms(text), x.crossTerms()...)
	for _, t := range relevanceTerms(text, lx, x) {
		if len(t.forms) > 0 && len(t.forms[0]) == 1 {
			keys = append(keys, t.forms[0][0])
		}
	}
	forEachHintKey(text, func(key string, _ int) {
		keys = append(keys, memory.TermEntityPrefix+key, memory.TermTaskPrefix+key)
	})
	for _, ph := range hintPhrases(text) {
		keys = append(keys, memory.TermEntityPrefix+phraseKey(ph))
	}
	return keys
}

// statsVocab is query understanding's view of term statistics.
type statsVocab struct{ c memory.TermCounts }

func (v statsVocab) entity(key string) (string, bool) {
	st, ok := v.c.Terms[memory.TermEntityPrefix+key]
	return st.Value, ok && st.Docs > 0
}

func (v statsVocab) taskType(key string) (string, bool) {
	st, ok := v.c.Terms[memory.TermTaskPrefix+key]
	return st.Value, ok && st.Docs > 0
}

func (v statsVocab) knownTaskTypes(int) []string { return nil }

// hybridLists are a hybrid search's two sides as the cached path's
// candidate lists, and their in-range parts under a time boost.
func hybridLists(hits []memory.HybridHit, tf *memory.VectorFilter) (vec vectorResult, kw, kwIn []kwHitID) {
	dense := slices.Clone(hits)
	slices.SortFunc(dense, func(a, b memory.HybridHit) int { return a.DenseRank - b.DenseRank })
	for _, h := range dense {
		if h.DenseRank == 0 {
			continue
		}
		vh := memory.VectorHit{Doc: h.Doc, Score: h.Dense}
		vec.hits = append(vec.hits, vh)
		if tf != nil && tf.Match(h.Doc) {
			vec.inRange = append(vec.inRange, vh)
		}
	}
	sparse := slices.Clone(hits)
	slices.SortFunc(sparse, func(a, b memory.HybridHit) int { return a.SparseRank - b.SparseRank })
	for _, h := range sparse {
		if h.SparseRank == 0 {
			continue
		}
		kh := kwHitID{h.Doc.ID, h.Sparse}
		kw = append(kw, kh)
		if tf != nil && tf.Match(h.Doc) {
			kwIn = append(kwIn, kh)
		}
	}
	return vec, kw, kwIn
}

// neighbourhood is what a stateless recall with a context window ranks
// over: its candidates' current versions and the other recallable
// memories of their source episodes, read from the store.
type neighbourhood struct {
	entries  map[string]*entry
	episodes map[string][]*entry
	counts   memory.TermCounts
}

func (n *neighbourhood) entry(id string) *entry { return n.entries[id] }

func (n *neighbourhood) coverage(q []relTerm, en *entry) float64 {
	return coverageOf(q, distinct(bm25.Terms(en.mem)), n.counts.Docs, func(t string) int64 { return n.counts.Terms[t].Docs })
}

func (n *neighbourhood) widen(l ranked, f memory.VectorFilter, factor float64, radius int) ranked {
	return widenIn(n.entries, n.episodes, l, f, factor, radius)
}

// readNeighbourhood reads the hits' current versions and the other
// memories of their source episodes.
func (e *Engine) readNeighbourhood(ctx context.Context, tenant string, hits []memory.HybridHit, counts memory.TermCounts) (*neighbourhood, error) {
	n := &neighbourhood{entries: map[string]*entry{}, episodes: map[string][]*entry{}, counts: counts}
	if len(hits) == 0 {
		return n, nil
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.Doc.ID
	}
	ms, err := e.deps.Memories.Memories(ctx, memory.MemoryFilter{Tenant: tenant, IDs: ids})
	if err != nil {
		return nil, errorf("recall: read the candidates", err)
	}
	var sources []string
	for _, m := range ms {
		for _, s := range m.Sources {
			if !slices.Contains(sources, s) {
				sources = append(sources, s)
			}
		}
	}
	if len(sources) > 0 {
		more, err := e.deps.Memories.Memories(ctx, memory.MemoryFilter{Tenant: tenant, Sources: sources, Statuses: recallable})
		if err != nil {
			return nil, errorf("recall: read the candidates' episodes", err)
		}
		ms = append(ms, more...)
	}
	for _, m := range ms {
		if _, dup := n.entries[m.ID]; dup || !slices.Contains(recallable, m.Status) {
			continue
		}
		doc := memory.VectorDocOf(m, nil)
		en := &entry{mem: m, doc: doc}
		n.entries[m.ID] = en
		for _, src := range m.Sources {
			n.episodes[src] = append(n.episodes[src], en)
		}
	}
	for _, list := range n.episodes {
		slices.SortFunc(list, compareEntries)
	}
	return n, nil
}
