package recall

import (
	"context"
	"slices"

	"github.com/hindsight-memory/hindsight/bm25"
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
//  3. reads the candidates from the store by ID, in one read (at most
//     2·max(VectorCandidates, KeywordCandidates) of them, whatever the
//     tenant's size): their current versions, whatever the index's lag;
//  4. ranks them with the cached path's rank, over this neighbourhood of
//     memories instead of the tenant's cache.
//
// With a context window (Config.Context, off by default) a memory borrows
// relevance from its neighbours in a source episode, which the index does
// not order: the recall then also reads the other memories of the
// candidates' source episodes (a second read).
//
// What the cached path does that this one does not: a time boost under
// RRF ranks the in-range candidates of the one search instead of
// searching the range again; the query LLM is not told the tenant's task
// types.

func (e *Engine) recallStateless(ctx context.Context, q memory.Query, clk *stageClock) (Response, error) {
	q, err := e.validateQuery(q)
	if err != nil {
		return Response{}, err
	}
	x := expandQuery(e.deps.Lexicon, q.Text)
	keys := statsKeys(q.Text, e.deps.Lexicon, x)
	clk.lap(&clk.s.Parse)
	counts, err := e.stats.get(ctx, q.Tenant, keys)
	if err != nil {
		return Response{}, errorf("recall: term statistics", err)
	}
	clk.lap(&clk.s.Store)
	parsed := e.understand(ctx, q, statsVocab{counts})
	f, tf := e.filters(q, &parsed)
	if parsed.Text != q.Text {
		x = expandQuery(e.deps.Lexicon, parsed.Text)
	}
	clk.lap(&clk.s.Parse)
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
	clk.lap(&clk.s.Vector)
	nb, err := e.readNeighbourhood(ctx, q.Tenant, hits, counts, e.cfg.Context > 0)
	if err != nil {
		return Response{}, err
	}
	clk.lap(&clk.s.Store)
	vec, kw, kwIn := e.hybridLists(hits, tf)
	results, pols := e.rank(nb, q, parsed, x, f, tf, vec, kw, kwIn, clk)
	return e.respond(ctx, q, parsed, results, pols, nil, clk), nil
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
		Sparse:      bm25.Query(append(lang.QueryTerms(text, func(t string) bool { return counts.Terms[t].Docs > 0 }), x.crossTerms()...), counts),
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

func distinct(terms []string) []string {
	slices.Sort(terms)
	return slices.Compact(terms)
}

// statsKeys are the term statistics a stateless recall of text needs: its
// terms and their translations (the sparse query), its units of meaning
// (relevance), and every phrase of it that could be an entity or a task
// type (hints).
func statsKeys(text string, lx *lexicon.Lexicon, x expansion) []string {
	keys := append(lang.DocTerms(text), x.crossTerms()...)
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
// candidate lists (the best VectorCandidates and KeywordCandidates), and
// their in-range parts under a time boost.
func (e *Engine) hybridLists(hits []memory.HybridHit, tf *memory.VectorFilter) (vec vectorResult, kw, kwIn []kwHitID) {
	dense := slices.Clone(hits)
	slices.SortFunc(dense, func(a, b memory.HybridHit) int { return a.DenseRank - b.DenseRank })
	for _, h := range dense {
		if h.DenseRank == 0 || h.DenseRank > e.cfg.VectorCandidates {
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
		if h.SparseRank == 0 || h.SparseRank > e.cfg.KeywordCandidates {
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

// neighbourhood is what a stateless recall ranks over: its candidates'
// current versions, read from the store, and with a context window the
// other recallable memories of their source episodes.
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

// readNeighbourhood reads the hits' current versions and, with episodes,
// the other memories of their source episodes.
func (e *Engine) readNeighbourhood(ctx context.Context, tenant string, hits []memory.HybridHit, counts memory.TermCounts, episodes bool) (*neighbourhood, error) {
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
	if episodes {
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
	}
	for _, m := range ms {
		if _, dup := n.entries[m.ID]; dup || !slices.Contains(recallable, m.Status) {
			continue
		}
		en := &entry{mem: m, doc: memory.VectorDocOf(m, nil)}
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
