package recall

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/memory"
)

// Recall returns the memories that best answer q, with their score
// breakdowns and provenance, and the text block for a prompt. Invalid
// queries return EINVALID with a message that says what to fix.
func (e *Engine) Recall(ctx context.Context, q memory.Query) (Response, error) {
	start := time.Now()
	clk := newStageClock()
	resp, err := e.recall(ctx, q, clk)
	if err != nil {
		e.deps.Metrics.RecallFailed(err)
		return Response{}, err
	}
	resp.Took, resp.Stages = time.Since(start), clk.s
	e.deps.Metrics.ObserveRecall(resp.Took, len(resp.Results))
	return resp, nil
}

// validateQuery checks q and fills in defaults.
func (e *Engine) validateQuery(q memory.Query) (memory.Query, error) {
	const op = "recall"
	if err := memory.ValidateTenant(op, q.Tenant); err != nil {
		return q, err
	}
	q.Text = strings.TrimSpace(q.Text)
	switch {
	case q.Text == "":
		return q, memory.Invalidf(op, "text is required: describe what to recall, e.g. \"how to parse CSV files with Chinese headers\"")
	case len(q.Text) > MaxQueryText:
		return q, memory.Invalidf(op, "text is %d bytes long; shorten it to at most %d", len(q.Text), MaxQueryText)
	case q.TopK == 0:
		q.TopK = e.cfg.DefaultTopK
	case q.TopK < 0 || q.TopK > e.cfg.MaxTopK:
		return q, memory.Invalidf(op, "top_k must be between 1 and %d, got %d", e.cfg.MaxTopK, q.TopK)
	}
	for _, k := range q.Kinds {
		if !k.Valid() {
			return q, memory.Invalidf(op, "kind %q is not one of preference, lesson, fact, rule", k)
		}
	}
	if q.MinConfidence < 0 || q.MinConfidence > 1 || math.IsNaN(q.MinConfidence) {
		return q, memory.Invalidf(op, "min_confidence must lie between 0 and 1, got %v", q.MinConfidence)
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		return q, memory.Invalidf(op, "since (%s) must be before until (%s)", q.Since.Format(time.RFC3339), q.Until.Format(time.RFC3339))
	}
	if q.MaxTokens < 0 || q.MaxTokens > MaxContextTokens {
		return q, memory.Invalidf(op, "max_tokens must be between 1 and %d, got %d", MaxContextTokens, q.MaxTokens)
	}
	if len(q.Entities) > memory.MaxEntities {
		return q, memory.Invalidf(op, "entities has %d items; the limit is %d", len(q.Entities), memory.MaxEntities)
	}
	fields := []memory.Field{{Name: "user_id", Value: q.UserID, Max: memory.MaxName}, {Name: "agent_id", Value: q.AgentID, Max: memory.MaxName},
		{Name: "project", Value: q.Project, Max: memory.MaxProject}, {Name: "project_name", Value: q.ProjectName, Max: memory.MaxName}, {Name: "task_type", Value: q.TaskType, Max: memory.MaxTaskType}}
	for i, e := range q.Entities {
		fields = append(fields, memory.Field{Name: fmt.Sprintf("entities[%d]", i), Value: e, Max: memory.MaxEntity})
	}
	if err := memory.CheckFields(op, fields...); err != nil {
		return q, err
	}
	q.TaskType = strings.TrimSpace(q.TaskType)
	return q, nil
}

// filterOf is the structured filter of q, applied to both candidate sources.
func filterOf(q memory.Query) memory.VectorFilter {
	statuses := []string{string(memory.StatusLive)}
	if q.IncludeCold {
		statuses = append(statuses, string(memory.StatusCold))
	}
	if q.IncludeSuperseded {
		statuses = append(statuses, string(memory.StatusSuperseded))
	}
	return memory.VectorFilter{
		// Whom recall acts for sees the shared space and their own; never
		// another user's memories.
		Tenant: q.Tenant, Scopes: memory.Visible(q.UserID, q.AgentID), Kinds: q.Kinds, TaskType: q.TaskType, Statuses: statuses,
		MinConfidence: q.MinConfidence, Entities: memory.NormalizeEntities(q.Entities),
		CreatedAfter: q.Since, CreatedBefore: q.Until,
	}
}

// understand parses q's text: the LLM when configured, else (or when it
// fails) the rules.
func (e *Engine) understand(ctx context.Context, q memory.Query, c vocabulary) Parsed {
	if q.NoParse {
		return Parsed{Text: q.Text, By: "none"}
	}
	now := e.deps.Clock()
	if e.cfg.LLMQueryParsing && e.deps.QueryLLM != nil {
		lctx, cancel := context.WithTimeout(ctx, e.cfg.LLMTimeout)
		p, err := parseLLM(lctx, e.deps.QueryLLM, q.Text, now, e.cfg.Location, c)
		cancel()
		if err == nil {
			return p
		}
		e.deps.Logger.Warn("recall: LLM query parsing failed; using the rules", "err", err)
	}
	return parseRules(q.Text, now, e.cfg.Location, c)
}

// vectorResult is the vector side's candidates.
type vectorResult struct {
	hits, inRange []memory.VectorHit
	err           error
}

func (e *Engine) searchVectors(ctx context.Context, text string, f memory.VectorFilter, tf *memory.VectorFilter) vectorResult {
	vecs, err := e.deps.Embedder.Embed(ctx, []string{text})
	if err != nil {
		return vectorResult{err: errorf("recall: embed query", err)}
	}
	if len(vecs) != 1 {
		return vectorResult{err: memory.Invalidf("recall: embed query", "embedder returned %d vectors for 1 text", len(vecs))}
	}
	var r vectorResult
	if r.hits, err = e.deps.Index.Search(ctx, memory.CollectionMemories, vecs[0], f, e.cfg.VectorCandidates); err != nil {
		return vectorResult{err: errorf("recall: vector search", err)}
	}
	if tf != nil {
		if r.inRange, err = e.deps.Index.Search(ctx, memory.CollectionMemories, vecs[0], *tf, e.cfg.VectorCandidates); err != nil {
			return vectorResult{err: errorf("recall: vector search in time range", err)}
		}
	}
	return r
}

// filters adds the caller's project to the hints and returns the filter
// of the candidates, narrowed by a time expression the query parsed to,
// and with TimeBoost the filter of the boosted ones.
func (e *Engine) filters(q memory.Query, parsed *Parsed) (f memory.VectorFilter, tf *memory.VectorFilter) {
	if p := memory.ProjectOf(q.Project, q.ProjectName).Entity(); p != "" {
		// The caller's project is a hint: its memories rank higher, and
		// the others stay.
		parsed.Entities = appendUnique(parsed.Entities, p)
	}
	f = filterOf(q)
	if parsed.Time != nil && q.Since.IsZero() && q.Until.IsZero() {
		switch e.cfg.TimeHints {
		case TimeFilter:
			f.CreatedAfter, f.CreatedBefore = parsed.Time.Since, parsed.Time.Until
			parsed.TimeUse = string(TimeFilter)
		case TimeBoost:
			t := f
			t.CreatedAfter, t.CreatedBefore = parsed.Time.Since, parsed.Time.Until
			tf = &t
			parsed.TimeUse = string(TimeBoost)
		}
	}
	return f, tf
}

func (e *Engine) recall(ctx context.Context, q memory.Query, clk *stageClock) (Response, error) {
	if e.cfg.Stateless {
		return e.recallStateless(ctx, q, clk)
	}
	q, err := e.validateQuery(q)
	if err != nil {
		return Response{}, err
	}
	clk.lap(&clk.s.Parse)
	c, err := e.cache(ctx, q.Tenant)
	if err != nil {
		return Response{}, err
	}
	verify, err := e.catchUpIfBehind(ctx, c)
	if err != nil {
		return Response{}, err
	}
	e.maybeSync(c)
	clk.lap(&clk.s.Store)
	parsed := e.understand(ctx, q, c)
	f, tf := e.filters(q, &parsed)
	clk.lap(&clk.s.Parse)

	// The two sources run one after the other: the keyword side costs
	// well under a millisecond, so overlapping it with the vector side
	// would save little and add a goroutine hand-off to every recall.
	var vec vectorResult
	if e.deps.Index != nil {
		if vec = e.searchVectors(ctx, parsed.Text, f, tf); vec.err != nil {
			return Response{}, vec.err
		}
	}
	clk.lap(&clk.s.Vector)
	x := expandQuery(e.deps.Lexicon, parsed.Text)
	terms := append(c.queryTerms(parsed.Text), x.crossTerms()...)
	kw, kwIn := c.searchKeyword(terms, f, tf, e.cfg.KeywordCandidates)
	clk.lap(&clk.s.Keyword)
	if parsed.TimeUse == string(TimeFilter) && len(kw) == 0 && !slices.ContainsFunc(vec.hits, similar) {
		// A range read from the text is a guess; when nothing at all was
		// created in it, answer without it rather than with nothing, and
		// say so. The expression's words count again ("summer" may match).
		// Explicit Since/Until never fall back.
		f.CreatedAfter, f.CreatedBefore = q.Since, q.Until
		parsed.TimeUse = timeFilterEmpty
		parsed.Text = q.Text
		x = expandQuery(e.deps.Lexicon, parsed.Text)
		terms = append(c.queryTerms(parsed.Text), x.crossTerms()...)
		if e.deps.Index != nil {
			vec = e.searchVectors(ctx, parsed.Text, f, nil)
			if vec.err != nil {
				return Response{}, vec.err
			}
		}
		kw, _ = c.searchKeyword(terms, f, nil, e.cfg.KeywordCandidates)
		clk.lap(&clk.s.Keyword)
	}
	if err := e.fetchMissing(ctx, c, q.Tenant, vec); err != nil {
		return Response{}, err
	}
	clk.lap(&clk.s.Store)

	results, pols := c.rank(e, q, parsed, x, f, tf, vec, kw, kwIn, clk)
	// Another process may have changed a result since the cache last
	// caught up: check them against the store, and rank again from the
	// corrected cache if any was stale.
	for round := 0; verify && round < maxVerifyRounds; round++ {
		stale, err := e.verify(ctx, c, q.Tenant, results)
		clk.lap(&clk.s.Store)
		if err != nil {
			return Response{}, err
		}
		if !stale {
			break
		}
		results, pols = c.rank(e, q, parsed, x, f, tf, vec, kw, kwIn, clk)
	}
	return e.respond(ctx, q, parsed, results, pols, c, clk), nil
}

// respond decorates ranked results, renders their text block and counts
// them as recalled (in c too, when there is a cache).
func (e *Engine) respond(ctx context.Context, q memory.Query, parsed Parsed, results []memory.Result, pols []polarity, c *tenantCache, clk *stageClock) Response {
	e.decorate(ctx, q, results, pols, clk)
	text, omitted := renderText(results, q.MaxTokens)
	resp := Response{Results: results, Text: text, Omitted: omitted, Parsed: parsed}
	if resp.Results == nil {
		resp.Results = []memory.Result{}
	}
	e.recordUsage(c, q.Tenant, results)
	clk.lap(&clk.s.Render)
	return resp
}

// maxVerifyRounds bounds how often one recall re-ranks after finding
// stale results; each round corrects the cache for what it found.
const maxVerifyRounds = 3

// verify reads the current version of every result from the store, the
// system of record. When one differs from the cached version (another
// process forgot, superseded, corrected or moved it since the last
// catch-up), the cache takes the store's version, or drops a memory the
// store no longer holds, and verify reports the results stale: the caller
// ranks again. Keyword candidates are re-checked by the ranking against
// the corrected cache, so a stale version is never served.
func (e *Engine) verify(ctx context.Context, c *tenantCache, tenant string, results []memory.Result) (stale bool, err error) {
	if len(results) == 0 {
		return false, nil
	}
	ids := make([]string, len(results))
	for i, r := range results {
		ids[i] = r.Memory.ID
	}
	current, err := e.deps.Memories.CurrentVersions(ctx, tenant, ids)
	if err != nil {
		return false, errorf("recall: check results against the store", err)
	}
	var changed, gone []string
	for _, r := range results {
		v, ok := current[r.Memory.ID]
		switch {
		case !ok:
			gone = append(gone, r.Memory.ID)
		case v != r.Memory.Version:
			changed = append(changed, r.Memory.ID)
		}
	}
	if len(changed) == 0 && len(gone) == 0 {
		return false, nil
	}
	if len(changed) > 0 {
		ms, err := e.deps.Memories.Memories(ctx, memory.MemoryFilter{Tenant: tenant, IDs: changed})
		if err != nil {
			return false, errorf("recall: read results changed in the store", err)
		}
		c.applyAll(ms, false)
	}
	c.drop(gone)
	return true, nil
}

// searchKeyword returns the keyword candidates passing f and, with a time
// boost, those passing tf too.
// queryTerms are the terms keyword search looks text up by
// (lang.QueryTerms, against this tenant's index).
func (c *tenantCache) queryTerms(text string) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return lang.QueryTerms(text, func(t string) bool { return c.kw.docFreq(t) > 0 })
}

func (c *tenantCache) searchKeyword(terms []string, f memory.VectorFilter, tf *memory.VectorFilter, k int) (kw, kwIn []kwHitID) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	run := func(f memory.VectorFilter) []kwHitID {
		in := f.Seconds()
		hits := c.kw.search(terms, func(ord int32) bool {
			if !in.Holds(c.created[ord]) {
				return false
			}
			e := c.byOrd[ord]
			return e != nil && f.Match(e.doc)
		}, k)
		out := make([]kwHitID, len(hits))
		for i, h := range hits {
			out[i] = kwHitID{c.byOrd[h.ord].mem.ID, h.score}
		}
		return out
	}
	kw = run(f)
	if tf != nil {
		kwIn = run(*tf)
	}
	return kw, kwIn
}

type kwHitID struct {
	id    string
	score float64
}

// fetchMissing loads vector hits the cache does not hold yet (written by
// another process since the last catch-up) from the store.
func (e *Engine) fetchMissing(ctx context.Context, c *tenantCache, tenant string, vec vectorResult) error {
	var missing []string
	c.mu.RLock()
	for _, hs := range [][]memory.VectorHit{vec.hits, vec.inRange} {
		for _, h := range hs {
			if _, ok := c.versions[h.Doc.ID]; !ok && !slices.Contains(missing, h.Doc.ID) {
				missing = append(missing, h.Doc.ID)
			}
		}
	}
	c.mu.RUnlock()
	if len(missing) == 0 {
		return nil
	}
	ms, err := e.deps.Memories.Memories(ctx, memory.MemoryFilter{Tenant: tenant, IDs: missing})
	if err != nil {
		return errorf("recall: load memories missing from the cache", err)
	}
	c.applyAll(ms, false)
	// IDs the store does not know (an index not yet reconciled after a
	// purge) are remembered, so that each recall does not ask again.
	c.markAbsent(missing)
	return nil
}

// similar reports whether a vector hit has anything in common with the
// query: a vector with cosine zero or below is no candidate, whatever its
// rank.
func similar(h memory.VectorHit) bool { return h.Score > 0 }

// rankView is the memories rank reads: a tenant's cache (whose lock the
// caller holds), or what a stateless recall read around its candidates.
type rankView interface {
	entry(id string) *entry
	// coverage is en's relevance to the query terms q.
	coverage(q []relTerm, en *entry) float64
	// widen is a context window over l (see Config.Context).
	widen(l ranked, f memory.VectorFilter, factor float64, radius int) ranked
}

// rank fuses the candidates, reranks them and returns the top results.
func (e *Engine) rank(c rankView, q memory.Query, parsed Parsed, x expansion, f memory.VectorFilter, tf *memory.VectorFilter,
	vec vectorResult, kw, kwIn []kwHitID, clk *stageClock) ([]memory.Result, []polarity) {

	// Candidate lists, re-checked against the cached versions: the vector
	// index may lag the store.
	cosine := map[string]float64{}
	vecList := func(hits []memory.VectorHit, f memory.VectorFilter) ranked {
		var r ranked
		for _, h := range hits {
			if !similar(h) {
				continue
			}
			if en := c.entry(h.Doc.ID); en != nil && f.Match(en.doc) {
				r.add(h.Doc.ID, h.Score)
				cosine[h.Doc.ID] = h.Score
			}
		}
		return r
	}
	kwList := func(hits []kwHitID, f memory.VectorFilter) ranked {
		var r ranked
		for _, h := range hits {
			// Re-checked too: verify may have replaced the version found.
			if en := c.entry(h.id); en != nil && f.Match(en.doc) {
				r.add(h.id, h.score)
			}
		}
		return r
	}
	bm25 := map[string]float64{}
	for _, h := range kw {
		bm25[h.id] = h.score
	}
	vs := e.cfg.VectorShare
	if e.deps.Index == nil {
		vs = 0
	}
	lists := []ranked{vecList(vec.hits, f), kwList(kw, f)}
	lists[0].weight, lists[1].weight = vs, 1-vs
	if tf != nil && e.cfg.Fusion == FusionRRF {
		in := []ranked{vecList(vec.inRange, *tf), kwList(kwIn, *tf)}
		in[0].weight, in[1].weight = vs*timeBoostShare, (1-vs)*timeBoostShare
		lists = append(lists, in...)
	}
	clk.lap(&clk.s.Fuse)
	// Absolute relevance of every candidate; with a context window a
	// neighbour borrows relevance as it borrows rank.
	rq := relevanceTerms(parsed.Text, e.deps.Lexicon, x)
	judge := e.relevanceJudge(parsed.Text)
	relevance := map[string]float64{}
	prob := map[string]float64{}
	for _, l := range lists {
		for _, id := range l.ids {
			if _, ok := relevance[id]; ok {
				continue
			}
			if en := c.entry(id); en != nil {
				r, p := judge.relevance(en, c.coverage(rq, en))
				prob[id] = p
				if e.cfg.VectorRelevance {
					r = max(r, vectorRelevance(cosine[id]))
				}
				relevance[id] = r
			}
		}
	}
	clk.lap(&clk.s.Relevance)
	if e.cfg.Context > 0 {
		for i := range lists {
			lists[i] = c.widen(lists[i], f, e.cfg.Context, e.cfg.ContextRadius)
		}
		var rl ranked
		for id, r := range relevance {
			rl.add(id, r)
		}
		rl.sortByScore()
		wr := c.widen(rl, f, e.cfg.Context, e.cfg.ContextRadius)
		for i, id := range wr.ids {
			relevance[id] = max(relevance[id], wr.scores[i])
		}
	}
	var fused map[string]float64
	if e.cfg.Fusion == FusionWeighted {
		fused = fuseWeighted(lists)
	} else {
		fused = fuseRRF(lists, e.cfg.RRFK)
	}
	clk.lap(&clk.s.Fuse)

	maxBM25 := 0.0
	for _, s := range bm25 {
		maxBM25 = max(maxBM25, s)
	}
	now := e.deps.Clock()
	w := e.cfg.Weights
	hints := len(parsed.Entities) > 0 || parsed.TaskType != "" || len(parsed.Phrases) > 0
	type scored struct {
		en *entry
		b  memory.ScoreBreakdown
	}
	cands := make([]scored, 0, len(fused))
	queryCJK := lang.HasCJK(parsed.Text)
	for id, rel := range fused {
		en := c.entry(id)
		if en == nil {
			continue
		}
		m := &en.mem
		if judge.model != nil {
			// The model's probability that the memory answers ranks
			// beside the fused similarity, at modelRankShare of it
			// (crossRankShare across languages): of
			// two memories that share the query's words, the one that
			// answers it comes first, while the words themselves still
			// lead (an equal share cost LoCoMo's recall@10 0.04).
			share := modelRankShare
			if lang.HasCJK(m.Content) != queryCJK {
				share = crossRankShare
			}
			rel = (rel + share*prob[id]) / (1 + share)
		}
		if tf != nil && e.cfg.Fusion == FusionWeighted {
			in := 0.0
			if tf.Match(en.doc) {
				in = 1
			}
			rel = (rel + timeBoostShare*in) / (1 + timeBoostShare)
		}
		if hints && e.cfg.HintBoost > 0 {
			hit := 0.0
			if carriesHint(en, parsed) {
				hit = 1
			}
			rel = (rel + e.cfg.HintBoost*hit) / (1 + e.cfg.HintBoost)
		}
		b := memory.ScoreBreakdown{
			Similarity: cosine[id],
			Fused:      rel,
			Recency:    recency(*m, now, e.cfg.RecencyHalfLife),
			Confidence: clamp01(m.Confidence),
			Usage:      float64(m.RecallCount) / float64(m.RecallCount+e.cfg.UsageHalf),
		}
		if maxBM25 > 0 {
			b.Keyword = bm25[id] / maxBM25
		}
		b.Relevance = relevance[id]
		b.Relevant = b.Relevance >= e.cfg.MinRelevance
		if e.cfg.MinRelevance >= 0 && !b.Relevant {
			continue
		}
		// Recency, confidence and usage scale what is relevant instead of
		// adding to it: they reorder memories about as relevant as each
		// other, and never lift a weak match over a strong one.
		b.Final = b.Fused * (w.Relevance + w.Recency*b.Recency + w.Confidence*b.Confidence + w.Usage*b.Usage)
		cands = append(cands, scored{en, b})
	}
	// What the user holds now comes before what they held before: a
	// superseded memory (asked for with IncludeSuperseded) ranks after
	// every current one, however it scores.
	superseded := func(s scored) bool {
		return s.en.mem.Status == memory.StatusSuperseded || s.en.mem.SupersededBy != ""
	}
	slices.SortFunc(cands, func(a, b scored) int {
		if sa, sb := superseded(a), superseded(b); sa != sb {
			if sb {
				return -1
			}
			return 1
		}
		if a.b.Final != b.b.Final {
			if a.b.Final > b.b.Final {
				return -1
			}
			return 1
		}
		return strings.Compare(a.en.mem.ID, b.en.mem.ID)
	})
	cands = cands[:min(len(cands), q.TopK)]
	results := make([]memory.Result, len(cands))
	for i, sc := range cands {
		results[i] = memory.Result{Memory: sc.en.mem.Clone(), Score: sc.b.Final, Breakdown: sc.b}
	}
	// Text that reads like an instruction to the agent is flagged even when
	// no writer flagged it, so callers and the text block can warn.
	pols := make([]polarity, len(results))
	for i := range results {
		m := &results[i].Memory
		en := c.entry(m.ID)
		if !slices.Contains(m.Flags, memory.FlagInstructionLike) && en.instructionLike(e.deps.Screener) {
			m.Flags = append(m.Flags, memory.FlagInstructionLike)
		}
		pols[i] = en.polarity()
	}
	clk.lap(&clk.s.Rerank)
	return results, pols
}

// timeFilterEmpty is Parsed.TimeUse when a parsed range matched nothing
// and was dropped.
const timeFilterEmpty = "ignored: no memory in range"

// timeBoostShare is the weight of the in-range lists relative to the
// unrestricted ones when a time expression boosts: in-range memories rank
// higher, out-of-range ones can still win on relevance.
const timeBoostShare = 0.5

// rank is Engine.rank over the cache, under its read lock.
func (c *tenantCache) rank(e *Engine, q memory.Query, parsed Parsed, x expansion, f memory.VectorFilter, tf *memory.VectorFilter,
	vec vectorResult, kw, kwIn []kwHitID, clk *stageClock) ([]memory.Result, []polarity) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return e.rank(c, q, parsed, x, f, tf, vec, kw, kwIn, clk)
}

func (c *tenantCache) entry(id string) *entry { return c.entries[id] }

func (c *tenantCache) coverage(q []relTerm, en *entry) float64 { return c.kw.coverage(q, en.ord) }

// widen gives each listed memory's neighbours in its source episodes
// factor^distance times its score, when that beats what they have, and
// re-sorts.
// Callers hold c.mu.
func (c *tenantCache) widen(l ranked, f memory.VectorFilter, factor float64, radius int) ranked {
	return widenIn(c.entries, c.episodes, l, f, factor, radius)
}

// widenIn is widen over the memories entries, ordered in their source
// episodes by episodes.
func widenIn(entries map[string]*entry, episodes map[string][]*entry, l ranked, f memory.VectorFilter, factor float64, radius int) ranked {
	score := make(map[string]float64, len(l.ids))
	for i, id := range l.ids {
		score[id] = l.scores[i]
	}
	for i, id := range l.ids {
		en := entries[id]
		if en == nil {
			continue
		}
		for _, n := range episodeNeighbors(episodes, en, radius) {
			if s := math.Pow(factor, float64(n.dist)) * l.scores[i]; s > score[n.e.mem.ID] && f.Match(n.e.doc) {
				score[n.e.mem.ID] = s
			}
		}
	}
	out := ranked{weight: l.weight}
	for id, s := range score {
		out.add(id, s)
	}
	out.sortByScore()
	return out
}

// carriesHint reports whether a memory carries a hinted entity or task
// type, or contains a quoted phrase or file name of the query.
func carriesHint(en *entry, p Parsed) bool {
	if p.TaskType != "" && en.mem.TaskType == p.TaskType {
		return true
	}
	for _, h := range p.Entities {
		if slices.Contains(en.doc.Entities, h) {
			return true
		}
	}
	if len(p.Phrases) > 0 {
		text := lang.Fold(en.mem.Content)
		for _, ph := range p.Phrases {
			if strings.Contains(text, ph) {
				return true
			}
		}
	}
	return false
}

// recency halves every halfLife since the memory's current version.
func recency(m memory.Memory, now time.Time, halfLife time.Duration) float64 {
	t := m.UpdatedAt
	if t.IsZero() {
		t = m.CreatedAt
	}
	age := now.Sub(t)
	if age <= 0 || halfLife <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(halfLife))
}

func clamp01(x float64) float64 { return min(max(x, 0), 1) }

// decorate adds provenance, event IDs when asked for, and contradiction
// flags. Provenance is worth less than an answer: lookup failures are
// logged and the results keep episode IDs only. A source episode the
// caller does not see (another user's session that taught a shared
// memory) is its ID alone, withheld: its task, session and events are
// that user's.
func (e *Engine) decorate(ctx context.Context, q memory.Query, rs []memory.Result, pols []polarity, clk *stageClock) {
	var sources []string
	for _, r := range rs {
		for _, s := range r.Memory.Sources {
			if !slices.Contains(sources, s) {
				sources = append(sources, s)
			}
		}
	}
	refs, err := e.episodes.refs(ctx, q.Tenant, sources)
	if err != nil {
		e.deps.Logger.Warn("recall: provenance", "tenant", q.Tenant, "err", err)
	}
	viewer := memory.ActingFor(q.UserID, q.AgentID)
	sessions := map[string][]string{} // session ID → its event IDs, read once
	for i := range rs {
		r := &rs[i]
		for _, s := range r.Memory.Sources {
			ref, ok := refs[s]
			if !ok {
				ref = sourceRef{ref: memory.EpisodeRef{ID: s}}
			}
			r.Episodes = append(r.Episodes, ref.as(viewer))
		}
		if q.WithEvents {
			r.EventIDs = e.eventIDs(ctx, q.Tenant, r, sessions)
		}
		// Evidence is event IDs: returned only when asked for.
		r.Memory.Evidence = nil
	}
	clk.lap(&clk.s.Provenance)
	markConflicts(rs, pols, e.deps.Conflicts)
	clk.lap(&clk.s.Conflicts)
}

// eventIDs are the raw events behind a result: the memory's evidence when
// it records some, else (with an EventLog) the events of its source
// sessions, at most MaxEventIDs.
func (e *Engine) eventIDs(ctx context.Context, tenant string, r *memory.Result, sessions map[string][]string) []string {
	if len(r.Memory.Evidence) > 0 {
		return slices.Clone(r.Memory.Evidence[:min(len(r.Memory.Evidence), e.cfg.MaxEventIDs)])
	}
	if e.deps.Events == nil {
		return nil
	}
	var out []string
	for _, ep := range r.Episodes {
		if ep.SessionID == "" {
			continue
		}
		ids, ok := sessions[ep.SessionID]
		if !ok {
			evs, err := e.deps.Events.SessionEvents(ctx, tenant, ep.SessionID)
			if err != nil {
				e.deps.Logger.Warn("recall: session events", "tenant", tenant, "session", ep.SessionID, "err", err)
			}
			for _, ev := range evs {
				ids = append(ids, ev.ID)
			}
			sessions[ep.SessionID] = ids
		}
		out = append(out, ids...)
		if len(out) >= e.cfg.MaxEventIDs {
			return out[:e.cfg.MaxEventIDs]
		}
	}
	return out
}

// recordUsage counts the results as recalled, in the cache (if any) at
// once and in the store in the background.
func (e *Engine) recordUsage(c *tenantCache, tenant string, rs []memory.Result) {
	if e.usage == nil || len(rs) == 0 {
		return
	}
	at := e.deps.Clock().UTC()
	ids := make([]string, len(rs))
	us := make([]memory.Usage, len(rs))
	for i, r := range rs {
		ids[i] = r.Memory.ID
		us[i] = memory.Usage{Tenant: tenant, MemoryID: r.Memory.ID, Kind: memory.UsageRecalled, At: at}
	}
	if c != nil {
		c.bumpUsage(ids, at)
	}
	e.usage.record(us)
}
