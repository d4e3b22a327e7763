package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/bm25"
	"github.com/hindsight-memory/hindsight/consolidate"
	"github.com/hindsight-memory/hindsight/index"
	"github.com/hindsight-memory/hindsight/keys"
	"github.com/hindsight-memory/hindsight/lang/inject"
	"github.com/hindsight-memory/hindsight/lang/lexicon"
	"github.com/hindsight-memory/hindsight/llm"
	"github.com/hindsight-memory/hindsight/llm/offline"
	"github.com/hindsight-memory/hindsight/llm/openai"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/merge"
	"github.com/hindsight-memory/hindsight/metrics"
	"github.com/hindsight-memory/hindsight/recall"
	"github.com/hindsight-memory/hindsight/redact"
	"github.com/hindsight-memory/hindsight/store/clickhouse"
	"github.com/hindsight-memory/hindsight/store/clickhouse/chdb"
	"github.com/hindsight-memory/hindsight/store/generation"
	"github.com/hindsight-memory/hindsight/store/local"
	"github.com/hindsight-memory/hindsight/store/milvus"
	"github.com/hindsight-memory/hindsight/workflows"
)

// DefaultEmbedDim is the offline embedder's dimension.
const DefaultEmbedDim = 384

// DefaultKeywordNeighbors is how many memories sharing words with a
// candidate the merge judge sees besides its vector neighbours.
const DefaultKeywordNeighbors = 3

// Config says which adapter backs each domain interface. For the episodic
// store set exactly one of ClickHouse (a server), ChDB (the embedded
// engine) or MemoryStore; for vectors, Milvus or Local (or neither, for an
// in-memory index). Without OpenAI the offline extractor, judge and
// embedder do the work.
type Config struct {
	ClickHouse  *clickhouse.Config
	ChDB        *chdb.Config
	MemoryStore bool
	// Store, when set, is used as the episodic store as it is (tests share
	// one between runtimes); the runtime does not close it.
	Store memory.EpisodicStore

	// Milvus or Local is the vector index; each generation (see
	// generation.Name) gets its own collections or directory under it.
	Milvus *milvus.Config
	Local  *local.Config

	// OpenAI configures an OpenAI-compatible endpoint for chat (extract,
	// judge) and, when it names an embedding model, embeddings.
	OpenAI *openai.Config
	// EmbedDim is the offline embedder's dimension (DefaultEmbedDim).
	EmbedDim int

	// Merge tunes merging; a zero Threshold means the default for the
	// embedder (merge.ThresholdFor).
	Merge  activities.MergeConfig
	Recall recall.Config
	// Lexicon translates and expands words for recall (lang/lexicon);
	// nil works without.
	Lexicon *lexicon.Lexicon
	// Redactor is what extraction reads through (nil: keyed with the
	// deployment's redaction key and RedactionPolicy); see redact.
	Redactor *redact.Redactor
	// RedactionPolicy is the personal-data policy when Redactor is nil.
	RedactionPolicy redact.Policy
	// Keys says where the deployment's keys are (package keys): Build
	// opens the redaction key and those NeedKeys names, after moving any
	// an earlier version kept in the store's settings out of it, and
	// fails when one is missing. Zero, with Store or MemoryStore, keys
	// are made for this process alone (tests).
	Keys     keys.Config
	NeedKeys []keys.Key

	Metrics *metrics.Metrics
	Logger  *slog.Logger
}

// Runtime is Hindsight assembled: every adapter behind its interface.
type Runtime struct {
	redactor        *redact.Redactor
	redactionPolicy redact.Policy
	// Keys are the deployment's keys Build opened.
	Keys  *keys.Set
	Store memory.EpisodicStore
	// Index and Embedder are the active vector index generation's; they
	// follow a switch to the next generation (see Generation).
	Index     memory.VectorIndex
	Embedder  memory.Embedder
	LLM       memory.LLM // nil when offline
	Extractor memory.Extractor
	Judge     memory.Judge
	// Screener reads memory text for poisoning, on the write path and in
	// recall: lang/inject's detector.
	Screener memory.Screener
	// Summarizer writes typical episodes: the LLM's, or the offline one.
	Summarizer consolidate.Summarizer
	Engine     *recall.Engine
	Indexer    *index.Indexer
	Merge      activities.MergeConfig
	// ChDB is the embedded engine's store, when the episodic store is
	// embedded; its Handler serves ClickHouse's HTTP interface to
	// operators on loopback.
	ChDB    *chdb.Store
	Metrics *metrics.Metrics
	Logger  *slog.Logger

	gens    *generation.Set
	parts   []Part
	closers []func() error
	stop    context.CancelFunc
}

// Build opens every adapter of cfg. On error, whatever was opened is
// closed again.
func Build(ctx context.Context, cfg Config) (_ *Runtime, err error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rt := &Runtime{Logger: log, Metrics: cfg.Metrics}
	defer func() {
		if err != nil {
			rt.Close()
		}
	}()

	// Models first: the embedder's dimension shapes the vector index.
	if cfg.OpenAI != nil {
		c, err := openai.New(*cfg.OpenAI)
		if err != nil {
			return nil, err
		}
		rt.LLM = c
		if cfg.Metrics != nil {
			rt.LLM = metrics.InstrumentLLM(c, cfg.Metrics)
		}
		if cfg.OpenAI.EmbeddingModel != "" {
			rt.Embedder = c
		}
	}
	if rt.Embedder == nil {
		dim := cfg.EmbedDim
		if dim == 0 {
			dim = DefaultEmbedDim
		}
		rt.Embedder = offline.NewEmbedder(dim)
	}
	rt.Merge = cfg.Merge
	rt.Screener = inject.Detector{}
	rt.redactor, rt.redactionPolicy = cfg.Redactor, cfg.RedactionPolicy
	// The judge sees the vector neighbours and the keyword neighbours.
	judged := max(rt.Merge.MaxNeighbors, merge.DefaultMaxNeighbors) + max(rt.Merge.KeywordNeighbors, DefaultKeywordNeighbors)
	if rt.LLM != nil {
		// The classifiers know what holds nothing to learn: the model is
		// not paid to read it.
		rt.Extractor = llm.NewExtractor(rt.LLM, llm.WithLogger(log), llm.WithChatter(offline.Chatter),
			llm.WithoutModelWhen(offline.NothingToLearn, offline.NewExtractor()))
		if rt.Judge, err = merge.NewLLMJudge(rt.LLM, merge.LLMOptions{MaxNeighbors: judged}); err != nil {
			return nil, err
		}
		if rt.Summarizer, err = consolidate.NewLLMSummarizer(rt.LLM); err != nil {
			return nil, err
		}
	} else {
		rt.Extractor = offline.NewExtractor()
		rt.Judge = merge.NewOfflineJudge(merge.OfflineOptions{MaxNeighbors: judged})
		rt.Summarizer = consolidate.Offline{}
	}
	if rt.Merge.MaxNeighbors == 0 {
		rt.Merge.MaxNeighbors = merge.DefaultMaxNeighbors
	}
	if rt.Merge.KeywordNeighbors == 0 {
		rt.Merge.KeywordNeighbors = DefaultKeywordNeighbors
	}
	if rt.Merge.Lifecycle == (memory.Lifecycle{}) {
		rt.Merge.Lifecycle = memory.DefaultLifecycle
	}

	switch {
	case cfg.Store != nil:
		rt.Store = cfg.Store
	case cfg.ClickHouse != nil:
		s, err := clickhouse.Open(ctx, *cfg.ClickHouse)
		if err != nil {
			return nil, err
		}
		rt.Store = s
	case cfg.ChDB != nil:
		s, err := chdb.Open(ctx, *cfg.ChDB)
		if err != nil {
			return nil, err
		}
		rt.Store, rt.ChDB = s, s
	case cfg.MemoryStore:
		rt.Store = memory.NewMemStore()
	default:
		return nil, errors.New("worker: no episodic store configured (ClickHouse, ChDB or MemoryStore)")
	}
	if cfg.Store == nil {
		rt.closers = append(rt.closers, rt.Store.Close)
	}
	kc := cfg.Keys
	if kc.Dir == "" && kc.Env == nil && (cfg.Store != nil || cfg.MemoryStore) {
		kc.Ephemeral = true
	}
	if kc.Logger == nil {
		kc.Logger = log
	}
	if rt.Keys, err = keys.Open(ctx, kc, rt.Store, append([]keys.Key{keys.Redaction}, cfg.NeedKeys...)...); err != nil {
		return nil, err
	}
	if rt.redactor == nil {
		rt.redactor = redact.New(rt.Keys.Get(keys.Redaction), rt.redactionPolicy)
	}

	// With Milvus, recall is production's: stateless, one hybrid search of
	// dense and BM25 sparse vectors, weighted by term statistics the
	// indexer keeps in the store (recall/stateless.go).
	if cfg.Milvus != nil {
		cfg.Recall.Stateless = true
	}
	var terms memory.TermStats
	tokenizer := ""
	if cfg.Recall.Stateless {
		ts, ok := rt.Store.(memory.TermStats)
		if !ok {
			return nil, fmt.Errorf("stateless recall needs term statistics, which the episodic store %T does not keep", rt.Store)
		}
		terms, tokenizer = ts, bm25.Tokenizer
	}
	rt.gens, err = generation.Open(ctx, generation.Config{
		Store: rt.Store, Embedder: rt.Embedder, Logger: log, Tokenizer: tokenizer,
		OpenIndex: func(ctx context.Context, name string, dim int) (memory.VectorIndex, error) {
			return openIndex(ctx, cfg, name, dim, log)
		},
		EmbedderFor: func(model string) (memory.Embedder, error) { return embedderFor(model, cfg.OpenAI) },
	})
	if err != nil {
		return nil, err
	}
	rt.closers = append(rt.closers, rt.gens.Close)
	rt.Index, rt.Embedder = rt.gens.Index(), rt.gens.Embedder()
	rt.gens.Poll(ctx) // announce at once what this process reads
	watchCtx, stop := context.WithCancel(context.Background())
	rt.stop = stop
	go rt.gens.Watch(watchCtx)

	if cfg.Recall.VectorShare == 0 && strings.HasPrefix(rt.Embedder.Model(), "offline-") {
		// A lexical embedder repeats BM25's matches without its weighting
		// of rare words; measured on LoCoMo, it earns a smaller share.
		cfg.Recall.VectorShare = recall.LexicalVectorShare
	}
	if !strings.HasPrefix(rt.Embedder.Model(), "offline-") {
		// A neural embedder's similarity says what a text means, not only
		// which words it shares: it may make a memory relevant.
		cfg.Recall.VectorRelevance = true
	}
	rt.Engine, err = recall.New(cfg.Recall, recall.Deps{
		Memories: rt.Store, Episodes: rt.Store, Events: rt.Store,
		Index: rt.Index, Embedder: rt.Embedder, QueryLLM: rt.LLM, Lexicon: cfg.Lexicon,
		Conflicts: merge.Conflicts, Screener: rt.Screener, Logger: log, Metrics: cfg.Metrics, Terms: terms,
	})
	if err != nil {
		return nil, err
	}
	rt.closers = append(rt.closers, rt.Engine.Close)
	ideps := index.Deps{Memories: rt.Store, Index: rt.Index, Embedder: rt.Embedder, Cache: rt.Engine}
	if cfg.Recall.Stateless {
		ideps.Keywords = index.NewKeywords(terms)
	}
	rt.Indexer, err = index.New(ideps, cfg.Recall.EmbedBatch)
	if err != nil {
		return nil, err
	}
	rt.parts = describeParts(cfg, rt)
	attrs := []any{"merge_threshold", rt.mergeThreshold()}
	for _, p := range rt.parts {
		attrs = append(attrs, strings.ReplaceAll(p.Name, " ", "_"), p.What)
	}
	log.Info("hindsight assembled", attrs...)
	return rt, nil
}

// Activities returns the activities over this runtime. tc and taskQueue
// are how the activities reach the tenants' ledgers.
func (rt *Runtime) Activities(tc client.Client, taskQueue string) *activities.Activities {
	return &activities.Activities{
		Store: rt.Store, Index: rt.Index, Embedder: rt.Embedder, Extractor: rt.Extractor,
		Judge: rt.Judge, Indexer: rt.Indexer, Keywords: rt.Engine, Summarizer: rt.Summarizer, Generations: rt.gens,
		Temporal: tc, TaskQueue: taskQueue, Merge: rt.Merge, Redactor: rt.redactor, RedactionPolicy: rt.redactionPolicy,
		Screener: rt.Screener,
	}
}

// Redactor is what every text passes through before it is stored: the
// configured one, or one keyed with the deployment's redaction key.
func (rt *Runtime) Redactor() *redact.Redactor { return rt.redactor }

// Generation returns the vector index generation recall reads and, during
// a switch to a new embedding model, the next one a reindex fills.
func (rt *Runtime) Generation() (active string, next string) {
	if n, ok := rt.gens.Next(); ok {
		next = n.Name
	}
	return rt.gens.Active().Name, next
}

// Close closes every adapter, the last opened first.
func (rt *Runtime) Close() error {
	if rt.stop != nil {
		rt.stop()
	}
	var errs []error
	for i := len(rt.closers) - 1; i >= 0; i-- {
		errs = append(errs, rt.closers[i]())
	}
	rt.closers = nil
	return errors.Join(errs...)
}

// mergeThreshold is the similarity a memory needs to reach the merge
// judge: the configured one, or the default of the active embedder.
func (rt *Runtime) mergeThreshold() float64 {
	if rt.Merge.Threshold > 0 {
		return rt.Merge.Threshold
	}
	return merge.ThresholdFor(rt.Embedder.Model())
}

// Part is one part of a running Hindsight, named for people.
type Part struct {
	Name, What string
}

// Parts names the runtime's parts for a start-up banner: what stores the
// episodic log and the vectors, and what reads the sessions.
func (rt *Runtime) Parts() []Part {
	return rt.parts
}

func describeParts(cfg Config, rt *Runtime) []Part {
	var store string
	switch {
	case rt.ChDB != nil:
		store = rt.ChDB.Describe()
	case cfg.ClickHouse != nil:
		store = "ClickHouse at " + clickhouseAddr(*cfg.ClickHouse)
	case cfg.MemoryStore:
		store = "in memory (kept until the process stops)"
	default:
		store = fmt.Sprintf("%T", rt.Store)
	}
	vectors := "in memory (kept until the process stops)"
	switch {
	case cfg.Milvus != nil:
		vectors = "Milvus at " + cfg.Milvus.Address
	case cfg.Local != nil:
		vectors = "local vector index in " + cfg.Local.Dir
	}
	reader := "offline: learned classifiers and the lexical judge (no LLM)"
	if cfg.OpenAI != nil {
		reader = "LLM " + cmp.Or(cfg.OpenAI.Model, openai.DefaultModel) + " at " + cmp.Or(cfg.OpenAI.BaseURL, openai.DefaultBaseURL)
	}
	recallBy := "per-process cache of each tenant's memories and keyword index, with the vector index"
	if rt.Engine.Config().Stateless {
		recallBy = "stateless: one hybrid search (dense and BM25 sparse vectors) and reads of the store by ID"
	}
	return []Part{
		{"episodic store", store},
		{"vector index", vectors + " (generation " + rt.gens.Active().Name + ")"},
		{"recall", recallBy},
		{"embedder", rt.Embedder.Model()},
		{"extraction and merge judge", reader},
	}
}

// clickhouseAddr is where a ClickHouse config points, without credentials.
func clickhouseAddr(c clickhouse.Config) string {
	if c.DSN != "" {
		if u, err := url.Parse(c.DSN); err == nil {
			return u.Scheme + "://" + u.Host + u.Path
		}
		return "(a DSN)"
	}
	return strings.Join(c.Addr, ", ")
}

// embedderFor rebuilds the embedder of a recorded generation from its
// model string: the offline embedder ("offline-ngram-v1-d384"), or an
// OpenAI-compatible model ("openai:text-embedding-3-small@1536") on the
// configured endpoint.
func embedderFor(model string, oc *openai.Config) (memory.Embedder, error) {
	if rest, ok := strings.CutPrefix(model, "offline-ngram-v1-d"); ok {
		dim, err := strconv.Atoi(rest)
		if err != nil {
			return nil, fmt.Errorf("generation model %q: bad dimension", model)
		}
		e := offline.NewEmbedder(dim)
		if e.Model() != model {
			return nil, fmt.Errorf("generation model %q is not this build's offline embedder %q", model, e.Model())
		}
		return e, nil
	}
	if rest, ok := strings.CutPrefix(model, "openai:"); ok {
		name, dimText, found := strings.Cut(rest, "@")
		dim, err := strconv.Atoi(dimText)
		if !found || err != nil {
			return nil, fmt.Errorf("generation model %q: want openai:<model>@<dim>", model)
		}
		if oc == nil {
			return nil, fmt.Errorf("generation model %q needs OPENAI_BASE_URL", model)
		}
		c := *oc
		c.EmbeddingModel, c.EmbeddingDim = name, dim
		return openai.New(c)
	}
	return nil, fmt.Errorf("generation model %q is not one this build can embed with", model)
}

// openIndex opens one generation of the configured vector index.
func openIndex(ctx context.Context, cfg Config, name string, dim int, log *slog.Logger) (memory.VectorIndex, error) {
	switch {
	case cfg.Milvus != nil:
		mc := *cfg.Milvus
		mc.Dim = dim
		mc.CollectionPrefix = cmp.Or(mc.CollectionPrefix, "hindsight") + "_" + name
		return milvus.Open(ctx, mc)
	case cfg.Local != nil:
		lc := *cfg.Local
		lc.Dim = dim
		lc.Dir = filepath.Join(lc.Dir, name)
		return local.Open(lc)
	}
	return memory.NewMemIndex(dim), nil
}

// StartReindex starts the Reindex workflow into the runtime's next vector
// index generation, when its embedder changed; a running reindex into the
// same generation is joined. It returns the generation, or "" when none
// is pending.
func StartReindex(ctx context.Context, c client.Client, taskQueue string, rt *Runtime) (string, error) {
	active, next := rt.Generation()
	if next == "" && rt.gens.Unfilled() {
		// The recorded generation could not serve: the active one, which
		// replaced it, is empty until filled.
		next = active
	}
	if next == "" {
		return "", nil
	}
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: workflows.ReindexWorkflowID(next), TaskQueue: taskQueue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
	}, workflows.Reindex, workflows.ReindexInput{Generation: next})
	if err != nil {
		return "", fmt.Errorf("start reindex into %s: %w", next, err)
	}
	return next, nil
}
