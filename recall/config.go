package recall

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/hindsight-memory/hindsight/lang/inject"
	"github.com/hindsight-memory/hindsight/lang/lexicon"
	"github.com/hindsight-memory/hindsight/memory"
)

// Weights are the rerank weights. A result's final score is
//
//	Relevance·fused + Recency·recency + Confidence·confidence + Usage·usage
//
// where each signal lies in [0,1]. They need not sum to 1; the seed
// defaults do.
type Weights struct {
	Relevance  float64 `json:"relevance"`
	Recency    float64 `json:"recency"`
	Confidence float64 `json:"confidence"`
	Usage      float64 `json:"usage"`
}

// LexicalVectorShare is the VectorShare suited to a lexical embedder (see
// Config.VectorShare).
const LexicalVectorShare = 0.3

// DefaultContext is the context window's factor (Config.Context): with
// it, LoCoMo recall@10 as memory_recall serves rose from 0.641 to 0.734
// (hindsight eval locomo --service-defaults).
const DefaultContext = 0.8

// DefaultWeights are the seeds' defaults: 0.6 relevance (fused similarity
// and keyword score), 0.2 recency, 0.15 confidence, 0.05 usage.
var DefaultWeights = Weights{Relevance: 0.6, Recency: 0.2, Confidence: 0.15, Usage: 0.05}

// Fusion names how vector and keyword candidates are combined.
type Fusion string

// Fusion methods.
const (
	// FusionWeighted is VectorShare·similarity + (1−VectorShare)·keyword,
	// each normalised by the best score of its list (a candidate missing
	// from a list gets that list's lowest score). It keeps how decisively
	// each source prefers its candidates: a source whose scores are flat
	// moves the ranking little. The default: on LoCoMo it beat RRF by
	// 4–11 points of recall@10 in every configuration measured.
	FusionWeighted Fusion = "weighted"
	// FusionRRF is reciprocal-rank fusion: Σ w/(RRFK + rank) over the
	// lists, scaled so that first place in every list is 1. It needs no
	// calibration between cosine and BM25 scores, but treats a confident
	// first place and a near-tie alike.
	FusionRRF Fusion = "rrf"
)

// TimeHints says what a time expression found in the query text does.
type TimeHints string

// Time hint modes.
const (
	// TimeFilter turns the expression into Since/Until: only memories
	// created in the range are recalled.
	TimeFilter TimeHints = "filter"
	// TimeBoost keeps every memory but ranks those created in the range
	// higher: with FusionWeighted a fused relevance f becomes (f + ½)/1½
	// in the range and f/1½ outside it; with FusionRRF the in-range
	// candidates count as two more ranked lists at half weight. It suits
	// stores whose creation time only approximates when the remembered
	// thing happened.
	TimeBoost TimeHints = "boost"
	// TimeIgnore only removes the expression from the matched text.
	TimeIgnore TimeHints = "ignore"
)

// Config tunes an Engine. The zero value of each field means its default.
type Config struct {
	// DefaultTopK is the result count when a query sets none (5); MaxTopK
	// is the most a query may ask for (50).
	DefaultTopK int
	MaxTopK     int
	// VectorCandidates and KeywordCandidates bound the candidate pools
	// taken from each source before fusion (50 each), so that latency stays
	// flat as a tenant's store grows.
	VectorCandidates  int
	KeywordCandidates int
	// Fusion is the fusion method (FusionWeighted).
	Fusion Fusion
	// RRFK is the rank offset of reciprocal-rank fusion (60).
	RRFK float64
	// VectorShare is the weight of vector similarity in FusionWeighted
	// (0.5), and the weight of the vector list in FusionRRF relative to the
	// keyword list's 1−VectorShare. With a lexical embedder such as
	// llm/offline, whose hashed words and n-grams overlap what BM25 matches
	// but without its weighting of rare words, LexicalVectorShare suits
	// better.
	VectorShare float64
	// Weights are the rerank weights; all zero means DefaultWeights.
	Weights Weights
	// RecencyHalfLife is the age at which the recency signal halves (30
	// days). Recency is measured from a memory's last version (UpdatedAt).
	RecencyHalfLife time.Duration
	// UsageHalf is the recall count at which the usage signal reaches 0.5
	// (5); it saturates towards 1 above.
	UsageHalf int
	// Context, when positive, is a context window: each memory's relevance
	// may borrow from the memories near it in the same source episode
	// (ordered by creation time). In each candidate list a memory at
	// distance d from a candidate gets Context^d times the candidate's
	// score when that beats its own. It helps when memories are
	// fine-grained (one per conversation turn) and a question is answered
	// across neighbouring turns, and costs a distilled memory little: its
	// neighbours are what the same session taught, relevant only through
	// it and ranked after it. DefaultContext when zero; negative turns it
	// off. A stateless engine reads its candidates' source episodes from
	// the store for it.
	Context float64
	// ContextRadius is how many neighbours on each side count (2).
	ContextRadius int
	// Location is the time zone time expressions are read in (UTC).
	Location *time.Location
	// TimeHints is what a time expression in the query does (TimeFilter).
	// Query.Since and Query.Until, when set, always filter and win over a
	// parsed expression.
	TimeHints TimeHints
	// HintBoost lifts memories that carry an entity or the task type the
	// query text hints at, or contain a phrase it quotes (0.1): a fused
	// relevance f becomes (f + HintBoost)/(1 + HintBoost) for them and
	// f/(1 + HintBoost) for the others. Hints never exclude a memory. Set
	// it negative to disable hints.
	HintBoost float64
	// MinRelevance is the absolute relevance a memory needs to be
	// recalled (DefaultMinRelevance; see relevance.go). Negative turns the
	// threshold off: every candidate is ranked and the best TopK returned.
	MinRelevance float64
	// RuleRelevance makes relevance the rule's (coverageOf) instead of
	// the learned model's probability (relmodel.go), as before the model.
	RuleRelevance bool
	// VectorRelevance lets the vector similarity make a memory relevant
	// (rescaled by vectorRelevance), not only rank it. Set it for neural
	// embedders; a lexical embedder's similarity restates the words that
	// relevance already counts.
	VectorRelevance bool
	// LLMQueryParsing asks Deps.QueryLLM to parse the query (time range,
	// entities, task type) instead of the rules; the rules remain the
	// fallback when the LLM fails or takes longer than LLMTimeout (3s).
	LLMQueryParsing bool
	LLMTimeout      time.Duration
	// RefreshInterval is how often, at most, recall catches a tenant up
	// with the store's change feed (5s). Catch-up runs in the background;
	// Refresh forces it.
	RefreshInterval time.Duration
	// MaxStaleness bounds how far behind the store a recall's ranking may
	// be (15s): a recall that finds its tenant's last catch-up older waits
	// for one. Whatever the lag, every result is checked against the
	// store before it is served, so a memory forgotten, superseded or
	// corrected by another process is never served as it was.
	MaxStaleness time.Duration
	// FeedOverlap re-reads this much of the change feed before the
	// watermark (1m), so that versions written with an equal or slightly
	// older timestamp by another process are not missed. Versions seen
	// twice are deduplicated by (ID, version).
	FeedOverlap time.Duration
	// RebuildInterval is how often a tenant's cache is rebuilt from
	// scratch (15m), which drops memories purged by another process; the
	// change feed cannot show deletions.
	RebuildInterval time.Duration
	// MaxTenants bounds how many tenants' caches stay in memory (256); the
	// least recently used is evicted and rebuilt on its next recall.
	MaxTenants int
	// NoUsage turns off recording each recall's results as
	// memory.UsageRecalled (recorded in the background by default).
	NoUsage bool
	// UsageQueue bounds the background usage queue (4096 entries); when it
	// is full, entries are dropped and counted.
	UsageQueue int
	// EpisodeCacheSize and EpisodeCacheTTL bound the provenance cache of
	// source episodes (100,000 entries, 10m): a tenant's cache reads its
	// memories' sources ahead, up to half of it, when it loads and syncs.
	EpisodeCacheSize int
	EpisodeCacheTTL  time.Duration
	// EmbedBatch bounds the texts per Embed call of the Indexer (64).
	EmbedBatch int
	// MaxEventIDs bounds the event IDs returned per result with
	// Query.WithEvents (100).
	MaxEventIDs int
	// Stateless serves recall from one hybrid search of the vector index
	// (Deps.Index must be a memory.HybridSearcher whose documents carry
	// sparse keyword vectors, see index.Keywords) and the store, with no
	// per-tenant cache: production, where any replica answers any tenant
	// (see stateless.go). Off, each process caches its tenants' memories
	// and keyword index (cache.go): `hindsight dev` and single machines.
	Stateless bool
	// StatsTTL is how long a stateless engine reuses a tenant's term
	// statistics (30s); query IDF weights lag writes by at most as much.
	StatsTTL time.Duration
}

// DefaultConfig is Config with every default filled in.
func DefaultConfig() Config { return Config{}.withDefaults() }

func (c Config) withDefaults() Config {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	defD := func(p *time.Duration, v time.Duration) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.DefaultTopK, 5)
	def(&c.MaxTopK, 50)
	def(&c.VectorCandidates, 50)
	def(&c.KeywordCandidates, 50)
	def(&c.UsageHalf, 5)
	def(&c.ContextRadius, 2)
	switch {
	case c.Context == 0:
		c.Context = DefaultContext
	case c.Context < 0:
		c.Context = 0
	}
	def(&c.MaxTenants, 256)
	def(&c.UsageQueue, 4096)
	def(&c.EpisodeCacheSize, 100_000)
	def(&c.EmbedBatch, 64)
	def(&c.MaxEventIDs, 100)
	defD(&c.RecencyHalfLife, 30*24*time.Hour)
	defD(&c.LLMTimeout, 3*time.Second)
	defD(&c.RefreshInterval, 5*time.Second)
	defD(&c.MaxStaleness, 3*c.RefreshInterval)
	defD(&c.FeedOverlap, time.Minute)
	defD(&c.RebuildInterval, 15*time.Minute)
	defD(&c.EpisodeCacheTTL, 10*time.Minute)
	defD(&c.StatsTTL, 30*time.Second)
	if c.Fusion == "" {
		c.Fusion = FusionWeighted
	}
	if c.RRFK == 0 {
		c.RRFK = 60
	}
	if c.VectorShare == 0 {
		c.VectorShare = 0.5
	}
	if c.Weights == (Weights{}) {
		c.Weights = DefaultWeights
	}
	if c.Location == nil {
		c.Location = time.UTC
	}
	if c.TimeHints == "" {
		c.TimeHints = TimeFilter
	}
	if c.HintBoost == 0 {
		c.HintBoost = 0.1
	}
	if c.MinRelevance == 0 {
		c.MinRelevance = DefaultMinRelevance
	}
	return c
}

// validate checks a Config with defaults applied.
func (c Config) validate() error {
	const op = "recall: config"
	switch {
	case c.DefaultTopK < 1 || c.MaxTopK < c.DefaultTopK:
		return memory.Invalidf(op, "need 1 <= DefaultTopK (%d) <= MaxTopK (%d)", c.DefaultTopK, c.MaxTopK)
	case c.VectorCandidates < 1 || c.KeywordCandidates < 1:
		return memory.Invalidf(op, "VectorCandidates (%d) and KeywordCandidates (%d) must be positive", c.VectorCandidates, c.KeywordCandidates)
	case c.Fusion != FusionRRF && c.Fusion != FusionWeighted:
		return memory.Invalidf(op, "Fusion %q is not one of rrf, weighted", c.Fusion)
	case c.RRFK <= 0:
		return memory.Invalidf(op, "RRFK must be positive, got %v", c.RRFK)
	case c.VectorShare < 0 || c.VectorShare > 1:
		return memory.Invalidf(op, "VectorShare must lie in [0,1], got %v", c.VectorShare)
	case c.Weights.Relevance <= 0 || c.Weights.Recency < 0 || c.Weights.Confidence < 0 || c.Weights.Usage < 0:
		return memory.Invalidf(op, "rerank weights must not be negative and the relevance weight must be positive, got %+v", c.Weights)
	case c.Context > 1:
		return memory.Invalidf(op, "Context must lie in [0,1], got %v", c.Context)
	case c.ContextRadius < 0:
		return memory.Invalidf(op, "ContextRadius must not be negative, got %d", c.ContextRadius)
	case c.TimeHints != TimeFilter && c.TimeHints != TimeBoost && c.TimeHints != TimeIgnore:
		return memory.Invalidf(op, "TimeHints %q is not one of filter, boost, ignore", c.TimeHints)
	case c.RecencyHalfLife < 0 || c.UsageHalf < 0 || c.MaxTenants < 1 || c.UsageQueue < 1 || c.EmbedBatch < 1:
		return memory.Invalidf(op, "RecencyHalfLife, UsageHalf, MaxTenants, UsageQueue and EmbedBatch must be positive")
	}
	return nil
}

// Deps are what an Engine needs from the outside world.
type Deps struct {
	// Memories is the system of record. Required.
	Memories memory.MemoryStore
	// Episodes provides provenance (task, outcome, dates of the source
	// episodes). Optional: without it results name their source episodes
	// by ID only.
	Episodes memory.EpisodeStore
	// Index and Embedder are the vector side. Optional together: without
	// them recall is keyword-only.
	Index    memory.VectorIndex
	Embedder memory.Embedder
	// Events, when set, lets a query WithEvents name the events of the
	// source sessions of memories that record no evidence of their own.
	Events memory.EventLog
	// QueryLLM parses queries when Config.LLMQueryParsing is set.
	QueryLLM memory.LLM
	// Lexicon translates and expands query terms (see lang/lexicon), so
	// that a Chinese query finds an English memory and the reverse.
	// Optional: without it queries match the words they use.
	Lexicon *lexicon.Lexicon
	// Conflicts decides whether two returned memories contradict each
	// other, and why. Nil means DefaultConflicts.
	//
	// The rule runs on every pair of results, so it must be cheap.
	Conflicts func(a, b memory.Memory) (bool, string)
	// Screener flags returned memories that read as instructions to the
	// agent although nobody flagged them. Nil means lang/inject's
	// Detector.
	Screener memory.Screener
	// Clock is "now" for recency and for time expressions (time.Now).
	Clock  func() time.Time
	Logger *slog.Logger
	// Metrics receives recall latencies and failures (a *metrics.Metrics);
	// nil reports nothing.
	Metrics Metrics
	// Terms are the tenants' term statistics, which a stateless engine
	// weighs query terms by. Required with Config.Stateless.
	Terms memory.TermStats
}

// Metrics is what recall reports.
type Metrics interface {
	ObserveRecall(took time.Duration, results int)
	RecallFailed(err error)
	UsageDropped(n int)
}

// noMetrics reports nothing.
type noMetrics struct{}

func (noMetrics) ObserveRecall(time.Duration, int) {}
func (noMetrics) RecallFailed(error)               {}
func (noMetrics) UsageDropped(int)                 {}

func (d Deps) validate(stateless bool) error {
	const op = "recall: deps"
	if d.Memories == nil {
		return memory.Invalidf(op, "a MemoryStore is required")
	}
	if (d.Index == nil) != (d.Embedder == nil) {
		return memory.Invalidf(op, "give both a vector index and an embedder, or neither")
	}
	if stateless {
		if _, ok := d.Index.(memory.HybridSearcher); !ok {
			return memory.Invalidf(op, "stateless recall needs a vector index with hybrid search (Milvus or the local index)")
		}
		if d.Terms == nil {
			return memory.Invalidf(op, "stateless recall needs the term statistics (Deps.Terms)")
		}
	}
	return nil
}

func (d Deps) withDefaults() Deps {
	if d.Clock == nil {
		d.Clock = time.Now
	}
	if d.Screener == nil {
		d.Screener = inject.Detector{}
	}
	if d.Metrics == nil {
		d.Metrics = noMetrics{}
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	return d
}

func errorf(op string, err error) error { return fmt.Errorf("%s: %w", op, err) }
