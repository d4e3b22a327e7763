package recall

import (
	"context"
	"reflect"
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
//     with the filters, as its two sides: the dense one (embedding the
//     query, and the index's Search) runs while the statistics are read,
//     since neither its text nor its filter depends on them when the rules
//     parse the query; the sparse one (HybridSearch of the sparse side)
//     once they are read. Each candidate comes back with its side's score
//     and the scalar fields the rerank needs, no vector (memory.JoinHybrid
//     joins the two);
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
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // an early dense side no one waits for
	var early *denseSide
	if q.NoParse || !e.parsesWithLLM() {
		// The rules read the text and the time range without statistics:
		// those the parse below finds, so the dense side starts now.
		pre := e.understand(ctx, q, statsVocab{})
		f, _ := e.filters(q, &pre)
		early = e.searchDense(ctx, pre.Text, f)
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
	hits, err := e.hybrid(ctx, parsed.Text, x, f, counts, early)
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
		if hits, err = e.hybrid(ctx, parsed.Text, x, f, counts, nil); err != nil {
			return Response{}, err
		}
	}
	clk.lap(&clk.s.Vector)
	nb, err := e.readNeighbourhood(ctx, q, hits, counts, e.cfg.Context > 0)
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

// hybrid runs the one hybrid search of a recall for text under f: the
// dense side early searched, when it searched the same, else one now, and
// the sparse side at the same time.
func (e *Engine) hybrid(ctx context.Context, text string, x expansion, f memory.VectorFilter, counts memory.TermCounts, early *denseSide) ([]memory.HybridHit, error) {
	hq := memory.HybridQuery{
		Filter:      f,
		Sparse:      bm25.Query(append(lang.QueryTerms(text, func(t string) bool { return counts.Terms[t].Docs > 0 }), x.crossTerms()...), counts),
		PerSide:     max(e.cfg.VectorCandidates, e.cfg.KeywordCandidates),
		DenseWeight: e.cfg.VectorShare,
	}
	d := early
	if d == nil || d.text != text || !reflect.DeepEqual(d.filter, f) {
		d = e.searchDense(ctx, text, f)
	}
	var sparse []memory.VectorHit
	if !hq.Sparse.IsZero() {
		hits, err := e.deps.Index.(memory.HybridSearcher).HybridSearch(ctx, memory.CollectionMemories,
			memory.HybridQuery{Filter: f, Sparse: hq.Sparse, PerSide: hq.PerSide})
		if err != nil {
			return nil, errorf("recall: hybrid search, sparse side", err)
		}
		for _, h := range hits {
			sparse = append(sparse, memory.VectorHit{Doc: h.Doc, Score: h.Sparse})
		}
	}
	<-d.done
	if d.err != nil {
		return nil, d.err
	}
	return memory.JoinHybrid(d.hits, sparse, hq), nil
}

// denseSide is the dense side of a recall's hybrid search for text under
// filter, searched in the background; its hits and error are set once
// done is closed.
type denseSide struct {
	text   string
	filter memory.VectorFilter
	done   chan struct{}
	hits   []memory.VectorHit
	err    error
}

// searchDense starts the dense side for text under f: the query's
// embedding, then the best max(VectorCandidates, KeywordCandidates) of
// the index's Search.
func (e *Engine) searchDense(ctx context.Context, text string, f memory.VectorFilter) *denseSide {
	d := &denseSide{text: text, filter: f, done: make(chan struct{})}
	go func() {
		defer close(d.done)
		vecs, err := e.deps.Embedder.Embed(ctx, []string{text})
		if err != nil {
			d.err = errorf("recall: embed query", err)
			return
		}
		if len(vecs) != 1 {
			d.err = memory.Invalidf("recall: embed query", "embedder returned %d vectors for 1 text", len(vecs))
			return
		}
		d.hits, err = e.deps.Index.Search(ctx, memory.CollectionMemories, vecs[0], f, max(e.cfg.VectorCandidates, e.cfg.KeywordCandidates))
		if err != nil {
			d.err = errorf("recall: hybrid search, dense side", err)
		}
	}()
	return d
}

// parsesWithLLM reports whether the query LLM parses queries, whose text
// and time range may then depend on the term statistics it is told of.
func (e *Engine) parsesWithLLM() bool {
	return e.cfg.LLMQueryParsing && e.deps.QueryLLM != nil
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
// the other memories of their source episodes: only the fields ranking
// and the response use (memory.MemoryFilter.RecallFields), Evidence too
// when q asks for event IDs. The one read costs what the columns it
// decodes cost, so reading the top k's whole rows after ranking would
// cost a read more than it saves.
func (e *Engine) readNeighbourhood(ctx context.Context, q memory.Query, hits []memory.HybridHit, counts memory.TermCounts, episodes bool) (*neighbourhood, error) {
	tenant, narrow := q.Tenant, !q.WithEvents
	n := &neighbourhood{entries: map[string]*entry{}, episodes: map[string][]*entry{}, counts: counts}
	if len(hits) == 0 {
		return n, nil
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.Doc.ID
	}
	ms, err := e.deps.Memories.Memories(ctx, memory.MemoryFilter{Tenant: tenant, IDs: ids, RecallFields: narrow})
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
			more, err := e.deps.Memories.Memories(ctx, memory.MemoryFilter{Tenant: tenant, Sources: sources, Statuses: recallable, RecallFields: narrow})
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
