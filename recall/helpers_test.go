package recall

import (
	"context"
	"hash/fnv"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/index"
	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/memory"
)

// wordEmbedder is a deterministic test embedder: hashed bags of index
// terms, L2-normalised. Texts sharing terms are similar. It counts the
// texts it embeds.
type wordEmbedder struct {
	dim   int
	texts atomic.Int64
}

func (e *wordEmbedder) Dim() int      { return e.dim }
func (e *wordEmbedder) Model() string { return "test-words" }

func (e *wordEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.texts.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, e.dim)
		for _, term := range lang.Terms(t) {
			h := fnv.New32a()
			h.Write([]byte(term))
			v[h.Sum32()%uint32(e.dim)]++
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if n > 0 {
			for j := range v {
				v[j] = float32(float64(v[j]) / math.Sqrt(n))
			}
		}
		out[i] = v
	}
	return out, nil
}

// base is the fixture's "now": Wednesday 18 March 2026, 10:00 UTC.
var base = now

func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

// mem returns a live fact of tenant created age before base.
func mem(tenant, id, content string, age time.Duration) memory.Memory {
	at := base.Add(-age)
	return memory.Memory{
		ID: id, Tenant: tenant, Version: 1, Kind: memory.KindFact, Content: content,
		ContentHash: memory.ContentHash(memory.KindFact, content), Confidence: 0.5,
		Status: memory.StatusLive, ValidFrom: at, Decay: 1, DecayAnchor: at,
		CreatedAt: at, UpdatedAt: at,
	}
}

// env is an engine with its store, index and indexer.
type env struct {
	store   *memory.MemStore
	index   *memory.MemIndex
	emb     *wordEmbedder
	engine  *Engine
	indexer *index.Indexer
}

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	return newEnvOver(t, cfg, memory.NewMemStore(), memory.NewMemIndex(64))
}

// stateless, when set, makes newEnv build stateless engines over
// indexers that keep keyword vectors: TestStatelessPassesTheSuite runs
// tests of the cached engine again that way. Tests in this package do
// not run in parallel.
var stateless bool

func newEnvOver(t *testing.T, cfg Config, store *memory.MemStore, vectors *memory.MemIndex) *env {
	t.Helper()
	e := &env{store: store, index: vectors, emb: &wordEmbedder{dim: 64}}
	deps := Deps{Memories: store, Episodes: store, Events: store, Index: vectors, Embedder: e.emb, Clock: fixedClock(base)}
	ideps := index.Deps{Memories: store, Index: vectors, Embedder: e.emb}
	if stateless {
		cfg.Stateless = true
		deps.Terms = store
		ideps.Keywords = index.NewKeywords(store)
	}
	eng, err := New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	e.engine = eng
	ideps.Cache = eng
	if e.indexer, err = index.New(ideps, 0); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) write(t *testing.T, ms ...memory.Memory) {
	t.Helper()
	if err := e.indexer.Write(context.Background(), ms); err != nil {
		t.Fatal(err)
	}
}

func (e *env) recall(t *testing.T, q memory.Query) Response {
	t.Helper()
	if q.TopK == 0 {
		q.TopK = 10
	}
	r, err := e.engine.Recall(context.Background(), q)
	if err != nil {
		t.Fatalf("Recall(%+v): %v", q, err)
	}
	return r
}

func ids(r Response) []string {
	out := make([]string, len(r.Results))
	for i, res := range r.Results {
		out[i] = res.Memory.ID
	}
	return out
}
