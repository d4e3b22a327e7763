package locomo

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hindsight-memory/hindsight/index"
	"github.com/hindsight-memory/hindsight/lang/lexicon"
	"github.com/hindsight-memory/hindsight/llm/offline"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/recall"
)

// Options configure a run.
type Options struct {
	// DataPath is the LoCoMo JSON file. Required unless Data is set.
	DataPath string
	// Data, when set, is used instead of reading DataPath.
	Data []Conversation
	// Ks are the cut-offs scored (5 and 10).
	Ks []int
	// Embedder embeds turns and questions. Nil runs keyword-only.
	Embedder memory.Embedder
	// NewIndex returns a fresh vector index of dimension dim for one
	// conversation (memory.NewMemIndex, exact search, by default).
	NewIndex func(ctx context.Context, dim int) (memory.VectorIndex, error)
	// Config is the recall configuration (EngineConfig(Embedder) by
	// default).
	Config *recall.Config
	// Conversations limits the run to these sample IDs; MaxQuestions to
	// the first questions of each conversation. Zero values mean all.
	Conversations []string
	MaxQuestions  int
	// Baseline also scores the README's reference baseline (BM25 and
	// character trigram TF-IDF fused by RRF) on the same questions.
	Baseline bool
	// Stateless recalls as production serves (recall.Config.Stateless):
	// one hybrid search of the index, whose documents carry BM25 sparse
	// vectors, and reads of the store, with no per-tenant cache. It needs
	// an Embedder, and a NewIndex that returns a memory.HybridSearcher
	// (memory.MemIndex by default, or Milvus).
	Stateless bool
	// Lexicon expands query terms as the service does (nil: none).
	Lexicon *lexicon.Lexicon
	// Threshold is the relevance threshold scored besides the unfiltered
	// ranking (recall.DefaultMinRelevance when zero): recall@k counting
	// only results at or above it, and how many questions get nothing.
	Threshold float64
	Logger    *slog.Logger
}

// EngineConfig is the recall configuration the evaluation uses: the
// service's defaults, with four differences that follow from the data, not
// from the questions:
//
//   - no recency in the rerank: the questions ask about any point of a
//     conversation's history, so a preference for recent turns measures
//     the wrong thing (confidence and usage are equal for every turn and
//     do not change the order);
//   - recalls are not counted as usage, or each question would promote
//     what earlier questions returned;
//   - a context window (Config.Context 0.8, radius 2): memories are single
//     turns, and an answer often spans a turn and its neighbours;
//   - with the offline embedder, the vector share for a lexical embedder
//     (recall.LexicalVectorShare): it restates BM25's matches without its
//     weighting of rare words. Other embedders keep the default share.
//
// The relevance threshold is off in the engine: each run scores the
// ranking unfiltered and at Options.Threshold.
func EngineConfig(emb memory.Embedder) recall.Config {
	cfg := recall.Config{
		NoUsage:       true,
		Weights:       recall.Weights{Relevance: 0.6, Recency: 0, Confidence: 0.15, Usage: 0.05},
		Context:       0.8,
		ContextRadius: 2,
		MinRelevance:  -1, // scored both ways: see Options.Threshold
	}
	if _, lexical := emb.(*offline.Embedder); lexical {
		cfg.VectorShare = recall.LexicalVectorShare
	}
	return cfg
}

// ServiceConfig is exactly the configuration memory_recall serves with,
// but for usage counting (each question would otherwise promote what
// earlier questions returned): recency in the rerank, no context window.
func ServiceConfig(emb memory.Embedder) recall.Config {
	cfg := recall.Config{NoUsage: true, MinRelevance: -1}
	if _, lexical := emb.(*offline.Embedder); lexical {
		cfg.VectorShare = recall.LexicalVectorShare
	}
	return cfg
}

// Report is the outcome of a run.
type Report struct {
	Data          string           `json:"data"`
	Conversations int              `json:"conversations"`
	Turns         int              `json:"turns"`
	Questions     int              `json:"questions"` // scored: with evidence
	Skipped       int              `json:"skipped"`   // without evidence
	Ks            []int            `json:"ks"`
	Categories    []CategoryReport `json:"categories"`
	Overall       CategoryReport   `json:"overall"`
	// Threshold is the relevance threshold of Recall.AtThreshold and None.
	Threshold float64 `json:"threshold"`
	// Config names the engine configuration: "eval" or "service".
	Config string `json:"config"`
	// Baseline holds the reference baseline's recall, when asked for, in
	// the same shape as Categories and Overall.
	Baseline      *BaselineReport `json:"baseline,omitempty"`
	Latency       Latency         `json:"latency"`
	Embedder      string          `json:"embedder"`
	Fusion        string          `json:"fusion"`
	IngestSeconds float64         `json:"ingest_seconds"`
	TotalSeconds  float64         `json:"total_seconds"`
}

// CategoryReport is recall@k of one category (or overall).
type CategoryReport struct {
	Category  int       `json:"category,omitempty"`
	Name      string    `json:"name"`
	Questions int       `json:"questions"`
	Recall    []float64 `json:"recall"` // recall@Ks[i]
	// AtThreshold is recall@Ks[i] counting only results whose relevance
	// passes the threshold.
	AtThreshold []float64 `json:"at_threshold,omitempty"`
	// None is how many questions got no result at the threshold: for the
	// adversarial category, about things never said, nothing is right.
	None int `json:"none"`
}

// BaselineReport is the reference baseline's recall@k.
type BaselineReport struct {
	Categories []CategoryReport `json:"categories"`
	Overall    CategoryReport   `json:"overall"`
}

// Latency summarises recall latency per question.
type Latency struct {
	P50Ms  float64 `json:"p50_ms"`
	P99Ms  float64 `json:"p99_ms"`
	MeanMs float64 `json:"mean_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// Run ingests the conversations and scores recall@k on their questions.
func Run(ctx context.Context, opt Options) (Report, error) {
	start := time.Now()
	if len(opt.Ks) == 0 {
		opt.Ks = []int{5, 10}
	}
	for _, k := range opt.Ks {
		if k < 1 || k > 50 {
			return Report{}, memory.Invalidf("locomo", "k must be between 1 and 50, got %d", k)
		}
	}
	ks := slices.Clone(opt.Ks)
	slices.Sort(ks)
	ks = slices.Compact(ks)
	if opt.NewIndex == nil {
		opt.NewIndex = func(_ context.Context, dim int) (memory.VectorIndex, error) { return memory.NewMemIndex(dim), nil }
	}
	cfg := EngineConfig(opt.Embedder)
	configName := "eval"
	if opt.Config != nil {
		cfg = *opt.Config
		configName = "custom"
	}
	if opt.Threshold == 0 {
		opt.Threshold = recall.DefaultMinRelevance
	}
	data := opt.Data
	if data == nil {
		if opt.DataPath == "" {
			return Report{}, memory.Invalidf("locomo", "give the LoCoMo file with --data")
		}
		var err error
		if data, err = Load(opt.DataPath); err != nil {
			return Report{}, err
		}
	}
	if len(opt.Conversations) > 0 {
		data = slices.DeleteFunc(slices.Clone(data), func(c Conversation) bool { return !slices.Contains(opt.Conversations, c.ID) })
		if len(data) == 0 {
			return Report{}, memory.Invalidf("locomo", "none of the conversations %q is in the data", opt.Conversations)
		}
	}

	rep := Report{Data: opt.DataPath, Ks: ks, Embedder: "none (keyword only)", Fusion: string(cfg.Fusion), Threshold: opt.Threshold, Config: configName}
	if rep.Fusion == "" {
		rep.Fusion = string(recall.DefaultConfig().Fusion)
	}
	if opt.Embedder != nil {
		rep.Embedder = opt.Embedder.Model()
	}
	maxK := ks[len(ks)-1]
	sums := map[int][]float64{} // category → recall sums per k
	onSums := map[int][]float64{}
	nones := map[int]int{}
	baseSums := map[int][]float64{}
	counts := map[int]int{}
	var took []time.Duration
	var ingest time.Duration
	for _, conv := range data {
		r, err := newRunner(ctx, conv, opt, cfg)
		if err != nil {
			return Report{}, err
		}
		t0 := time.Now()
		n, err := r.ingest(ctx)
		ingest += time.Since(t0)
		if err != nil {
			r.close()
			return Report{}, err
		}
		rep.Conversations++
		rep.Turns += n
		qs := conv.QA
		if opt.MaxQuestions > 0 && len(qs) > opt.MaxQuestions {
			qs = qs[:opt.MaxQuestions]
		}
		var base *baseline
		if opt.Baseline {
			base = newBaseline(conv)
		}
		for _, q := range qs {
			if len(q.Evidence) == 0 {
				rep.Skipped++
				continue
			}
			got, rel, d, err := r.ask(ctx, q.Text, maxK)
			if err != nil {
				r.close()
				return Report{}, fmt.Errorf("locomo: %s: question %q: %w", conv.ID, q.Text, err)
			}
			took = append(took, d)
			if sums[q.Category] == nil {
				sums[q.Category] = make([]float64, len(ks))
				onSums[q.Category] = make([]float64, len(ks))
			}
			var on []string
			for i, g := range got {
				if rel[i] >= opt.Threshold {
					on = append(on, g)
				}
			}
			if len(on) == 0 {
				nones[q.Category]++
			}
			for i, k := range ks {
				sums[q.Category][i] += recallAt(q.Evidence, got, k)
				onSums[q.Category][i] += recallAt(q.Evidence, on, k)
			}
			if base != nil {
				if baseSums[q.Category] == nil {
					baseSums[q.Category] = make([]float64, len(ks))
				}
				top := base.rank(q.Text, maxK)
				for i, k := range ks {
					baseSums[q.Category][i] += recallAt(q.Evidence, top, k)
				}
			}
			counts[q.Category]++
			rep.Questions++
		}
		r.close()
	}

	rep.Categories, rep.Overall = summarize(sums, counts, len(ks))
	onCats, onOverall := summarize(onSums, counts, len(ks))
	for i := range rep.Categories {
		rep.Categories[i].AtThreshold = onCats[i].Recall
		rep.Categories[i].None = nones[rep.Categories[i].Category]
		rep.Overall.None += rep.Categories[i].None
	}
	rep.Overall.AtThreshold = onOverall.Recall
	if opt.Baseline {
		cats, overall := summarize(baseSums, counts, len(ks))
		rep.Baseline = &BaselineReport{Categories: cats, Overall: overall}
	}
	rep.Latency = latency(took)
	rep.IngestSeconds = round3(ingest.Seconds())
	rep.TotalSeconds = round3(time.Since(start).Seconds())
	return rep, nil
}

// summarize averages recall sums per category and overall.
func summarize(sums map[int][]float64, counts map[int]int, nk int) ([]CategoryReport, CategoryReport) {
	cats := make([]int, 0, len(counts))
	for c := range counts {
		cats = append(cats, c)
	}
	slices.Sort(cats)
	var out []CategoryReport
	overall := CategoryReport{Name: "overall", Recall: make([]float64, nk)}
	for _, c := range cats {
		cr := CategoryReport{Category: c, Name: CategoryName(c), Questions: counts[c], Recall: make([]float64, nk)}
		for i := range nk {
			cr.Recall[i] = round3(sums[c][i] / float64(counts[c]))
			overall.Recall[i] += sums[c][i]
		}
		overall.Questions += counts[c]
		out = append(out, cr)
	}
	for i := range nk {
		if overall.Questions > 0 {
			overall.Recall[i] = round3(overall.Recall[i] / float64(overall.Questions))
		}
	}
	return out, overall
}

// recallAt is the fraction of evidence found among the first k dia IDs.
func recallAt(evidence, got []string, k int) float64 {
	top := got[:min(k, len(got))]
	found := 0
	for _, e := range evidence {
		if slices.Contains(top, e) {
			found++
		}
	}
	return float64(found) / float64(len(evidence))
}

func latency(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	ms := func(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }
	// Nearest-rank percentiles.
	at := func(p float64) time.Duration { return s[int(math.Ceil(p*float64(len(s))))-1] }
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return Latency{P50Ms: ms(at(0.50)), P99Ms: ms(at(0.99)), MeanMs: ms(sum / time.Duration(len(s))), MaxMs: ms(s[len(s)-1])}
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// runner holds one conversation's store, index and engine.
type runner struct {
	conv    Conversation
	tenant  string
	store   *memory.MemStore
	index   memory.VectorIndex
	engine  *recall.Engine
	indexer *index.Indexer
	dia     map[string]string // memory ID → dia ID
}

func newRunner(ctx context.Context, conv Conversation, opt Options, cfg recall.Config) (*runner, error) {
	r := &runner{conv: conv, tenant: tenantOf(conv.ID), store: memory.NewMemStore(), dia: map[string]string{}}
	if err := memory.ValidateTenant("locomo", r.tenant); err != nil {
		return nil, err
	}
	if opt.Embedder != nil {
		idx, err := opt.NewIndex(ctx, opt.Embedder.Dim())
		if err != nil {
			return nil, fmt.Errorf("locomo: new index: %w", err)
		}
		r.index = idx
	}
	// The conversation's "now" is the day after its last session.
	var now time.Time
	for _, s := range conv.Sessions {
		if s.Date.After(now) {
			now = s.Date
		}
	}
	now = now.AddDate(0, 0, 1)
	deps := recall.Deps{Memories: r.store, Episodes: r.store, Lexicon: opt.Lexicon, Clock: func() time.Time { return now }, Logger: opt.Logger}
	if r.index != nil {
		deps.Index, deps.Embedder = r.index, opt.Embedder
	}
	ideps := index.Deps{Memories: r.store}
	if r.index != nil {
		ideps.Index, ideps.Embedder = r.index, opt.Embedder
	}
	if opt.Stateless {
		cfg.Stateless, deps.Terms = true, r.store
		ideps.Keywords = index.NewKeywords(r.store)
	}
	var err error
	if r.engine, err = recall.New(cfg, deps); err != nil {
		r.close()
		return nil, err
	}
	ideps.Cache = r.engine
	if r.indexer, err = index.New(ideps, cfg.EmbedBatch); err != nil {
		r.close()
		return nil, err
	}
	// A warm engine, as in the service: the tenant's cache exists before
	// the writes, so the Indexer updates it in place.
	if err := r.engine.Refresh(ctx, r.tenant); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// tenantOf turns a sample ID into a valid tenant name.
func tenantOf(id string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, id)
}

// ingest writes one episode per session and one memory per turn, through
// the Indexer, and returns the number of turns.
func (r *runner) ingest(ctx context.Context) (int, error) {
	n := 0
	for _, s := range r.conv.Sessions {
		sessionID := fmt.Sprintf("%s/session_%d", r.conv.ID, s.Number)
		ep := memory.Episode{
			ID: memory.EpisodeID(r.tenant, sessionID), Tenant: r.tenant, SessionID: sessionID,
			Task:    fmt.Sprintf("conversation between %s and %s, session %d", r.conv.SpeakerA, r.conv.SpeakerB, s.Number),
			Outcome: memory.OutcomeUnknown, StartedAt: s.Date, EndedAt: s.Date, EventCount: len(s.Turns),
			Status: memory.EpisodeLive, Entities: []string{r.conv.SpeakerA, r.conv.SpeakerB}, CreatedAt: s.Date,
		}
		if err := r.store.PutEpisode(ctx, ep); err != nil {
			return n, fmt.Errorf("locomo: %s: %w", sessionID, err)
		}
		ms := make([]memory.Memory, 0, len(s.Turns))
		for i, t := range s.Turns {
			m := turnMemory(r.tenant, sessionID, ep.ID, s.Date, i, t)
			r.dia[m.ID] = t.DiaID
			ms = append(ms, m)
		}
		if err := r.indexer.Write(ctx, ms); err != nil {
			return n, fmt.Errorf("locomo: %s: %w", sessionID, err)
		}
		n += len(ms)
	}
	return n, nil
}

// turnMemory is the memory of one turn: a fact whose content is the
// speaker's words and the caption of any image shared, created at the
// session's date (turns one second apart, keeping their order), sourced
// from the session's episode, with the turn's event as evidence.
func turnMemory(tenant, sessionID, episodeID string, date time.Time, i int, t Turn) memory.Memory {
	content := t.Speaker + ": " + t.Text
	if t.Caption != "" {
		content += " [shared an image: " + t.Caption + "]"
	}
	at := date.Add(time.Duration(i) * time.Second)
	m := memory.Memory{
		Tenant: tenant, Version: 1, Kind: memory.KindFact, Content: content,
		ContentHash: memory.ContentHash(memory.KindFact, content),
		Entities:    []string{t.Speaker}, Sources: []string{episodeID},
		Evidence: []string{memory.EventID(tenant, sessionID, i)},
		Status:   memory.StatusLive, ValidFrom: date, Decay: 1, DecayAnchor: at,
		Reason: "locomo turn " + t.DiaID, CreatedAt: at, UpdatedAt: at,
	}
	m.ID = memory.MemoryID(tenant, m.ContentHash, t.DiaID)
	m.Confidence = memory.DefaultLifecycle.Confidence(m)
	return m
}

// ask recalls for a question and returns the dia IDs of the results.
// ask returns the dia IDs recalled for a question, best first, with
// each result's absolute relevance.
func (r *runner) ask(ctx context.Context, question string, k int) ([]string, []float64, time.Duration, error) {
	t0 := time.Now()
	resp, err := r.engine.Recall(ctx, memory.Query{Tenant: r.tenant, Text: question, TopK: k})
	d := time.Since(t0)
	if err != nil {
		return nil, nil, d, err
	}
	out := make([]string, len(resp.Results))
	rel := make([]float64, len(resp.Results))
	for i, res := range resp.Results {
		out[i] = r.dia[res.Memory.ID]
		rel[i] = res.Breakdown.Relevance
	}
	return out, rel, d, nil
}

func (r *runner) close() {
	if r.engine != nil {
		r.engine.Close()
	}
	if r.index != nil {
		r.index.Close()
	}
}
