package recall

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/index"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/metrics"
)

func TestUsageRecordedInBackground(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Config{})
	e.write(t, mem("acme", "m1", "cache invalidation uses etags", 0), mem("acme", "m2", "unrelated words entirely", 0))
	r := e.recall(t, memory.Query{Tenant: "acme", Text: "etags cache", TopK: 1})
	if got := ids(r); !slices.Equal(got, []string{"m1"}) {
		t.Fatalf("recall = %q", got)
	}
	if err := e.engine.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := e.store.Memory(ctx, "acme", "m1")
	if err != nil || m.RecallCount != 1 || !m.LastRecalledAt.Equal(base) {
		t.Fatalf("after Flush m1 = count %d, last %v, %v; want 1 at %v", m.RecallCount, m.LastRecalledAt, err, base)
	}
	if other, _ := e.store.Memory(ctx, "acme", "m2"); other.RecallCount != 0 {
		t.Fatalf("m2 was not returned but has recall count %d", other.RecallCount)
	}
	// The cache counts at once, so the usage signal moves before the store
	// is written.
	r = e.recall(t, memory.Query{Tenant: "acme", Text: "etags cache", TopK: 1})
	if u := r.Results[0].Breakdown.Usage; u <= 0 {
		t.Fatalf("usage signal after one recall = %v, want > 0", u)
	}
}

// blockingStore blocks RecordUsage until released, to prove recall does
// not wait for it.
type blockingStore struct {
	*memory.MemStore
	release chan struct{}
	once    sync.Once
	entered chan struct{}
}

func (s *blockingStore) RecordUsage(ctx context.Context, us []memory.Usage) error {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	return s.MemStore.RecordUsage(ctx, us)
}

func TestUsageOffTheRequestPath(t *testing.T) {
	store := &blockingStore{MemStore: memory.NewMemStore(), release: make(chan struct{}), entered: make(chan struct{})}
	m := metrics.New()
	eng, err := New(Config{UsageQueue: 2}, Deps{Memories: store, Clock: fixedClock(base), Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	ix, _ := index.New(index.Deps{Memories: store, Cache: eng}, 0)
	if err := ix.Write(context.Background(), []memory.Memory{mem("acme", "m1", "etags", 0), mem("acme", "m2", "etags too", 0)}); err != nil {
		t.Fatal(err)
	}
	q := memory.Query{Tenant: "acme", Text: "etags"}
	if _, err := eng.Recall(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	<-store.entered // the writer is now stuck in RecordUsage
	// Recalls still answer while the store blocks, and overflowing the
	// queue drops and counts instead of waiting.
	for range 5 {
		if _, err := eng.Recall(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	close(store.release)
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	body := scrape(t, m)
	if !strings.Contains(body, "hindsight_recall_usage_dropped_total") || strings.Contains(body, "hindsight_recall_usage_dropped_total 0\n") {
		t.Fatalf("no drops counted with a full queue:\n%s", grep(body, "usage_dropped"))
	}
	if !strings.Contains(body, "hindsight_recall_duration_seconds_count 6") || !strings.Contains(body, "hindsight_recall_results_sum 12") {
		t.Fatalf("recall metrics:\n%s", grep(body, "hindsight_recall"))
	}
}

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestQueryUnderstanding(t *testing.T) {
	e := newEnv(t, Config{NoUsage: true})
	lastWeek := mem("acme", "lastweek", "the CSV import failed on a BOM", 8*24*time.Hour) // Tuesday 10 March
	old := mem("acme", "old", "the CSV import failed on a BOM", 40*24*time.Hour)
	e.write(t, lastWeek, old)

	r := e.recall(t, memory.Query{Tenant: "acme", Text: "why did the CSV import fail last week"})
	if got := ids(r); !slices.Equal(got, []string{"lastweek"}) {
		t.Fatalf("a time expression filters: got %q", got)
	}
	p := r.Parsed
	if p.Time == nil || !p.Time.Since.Equal(d(2026, 3, 9)) || !p.Time.Until.Equal(d(2026, 3, 16)) || p.TimeUse != "filter" {
		t.Fatalf("parsed %+v, want last week as a filter", p)
	}
	if strings.Contains(p.Text, "last week") {
		t.Fatalf("the time expression stays in the matched text %q", p.Text)
	}

	// Chinese, and an empty range falls back to no filter, saying so.
	r = e.recall(t, memory.Query{Tenant: "acme", Text: "去年 CSV import"})
	if got := ids(r); len(got) != 2 || r.Parsed.TimeUse != timeFilterEmpty {
		t.Fatalf("去年 matches nothing: want both memories and TimeUse %q, got %q %q", timeFilterEmpty, got, r.Parsed.TimeUse)
	}
	// Explicit bounds win over the text.
	r = e.recall(t, memory.Query{Tenant: "acme", Text: "CSV import last week", Until: base.Add(-30 * 24 * time.Hour)})
	if got := ids(r); !slices.Equal(got, []string{"old"}) || r.Parsed.TimeUse != "" {
		t.Fatalf("explicit until: got %q, time use %q", got, r.Parsed.TimeUse)
	}
	// NoParse keeps the text as is.
	r = e.recall(t, memory.Query{Tenant: "acme", Text: "CSV import last week", NoParse: true})
	if len(r.Results) != 2 || r.Parsed.Time != nil || r.Parsed.By != "none" {
		t.Fatalf("NoParse: %d results, parsed %+v", len(r.Results), r.Parsed)
	}
}

func TestTimeBoost(t *testing.T) {
	e := newEnv(t, Config{NoUsage: true, TimeHints: TimeBoost, Weights: Weights{Relevance: 1, Recency: 0, Confidence: 0, Usage: 0}})
	inRange := mem("acme", "in", "we moved the CSV import to a queue", 8*24*time.Hour)
	better := mem("acme", "out", "the CSV import moved to a queue worker", 40*24*time.Hour)
	e.write(t, inRange, better)
	r := e.recall(t, memory.Query{Tenant: "acme", Text: "CSV import queue worker last week"})
	if got := ids(r); !slices.Equal(got, []string{"in", "out"}) || r.Parsed.TimeUse != "boost" {
		t.Fatalf("boost keeps both and ranks the in-range one first: got %q (%s)", got, r.Parsed.TimeUse)
	}
}

func TestHints(t *testing.T) {
	e := newEnv(t, Config{NoUsage: true, Weights: Weights{Relevance: 1, Recency: 0, Confidence: 0, Usage: 0}})
	billing := mem("acme", "billing", "retry the webhook with backoff", 0)
	billing.Entities = []string{"Billing Service"}
	billing.TaskType = "incident-response"
	plain := mem("acme", "plain", "retry the webhook with backoff", 0)
	file := mem("acme", "file", "retry the webhook with backoff after editing deploy.yaml", 0)
	e.write(t, billing, plain, file)

	r := e.recall(t, memory.Query{Tenant: "acme", Text: "webhook retries in the billing service"})
	if got := ids(r); got[0] != "billing" || !slices.Equal(r.Parsed.Entities, []string{"billing service"}) {
		t.Fatalf("entity hint: got %q, parsed %+v", got, r.Parsed)
	}
	r = e.recall(t, memory.Query{Tenant: "acme", Text: "webhook retry during incident response"})
	if got := ids(r); got[0] != "billing" || r.Parsed.TaskType != "incident-response" {
		t.Fatalf("task type hint: got %q, parsed %+v", got, r.Parsed)
	}
	r = e.recall(t, memory.Query{Tenant: "acme", Text: `webhook retry "deploy.yaml"`})
	if got := ids(r); got[0] != "file" || !slices.Contains(r.Parsed.Phrases, "deploy.yaml") {
		t.Fatalf("file and quoted hints: got %q, parsed %+v", got, r.Parsed)
	}
	// Hints never exclude: all three stay.
	if len(r.Results) != 3 {
		t.Fatalf("hints excluded memories: %q", ids(r))
	}
}

// fakeLLM answers query parsing with a fixed JSON, or fails.
type fakeLLM struct {
	answer string
	err    error
	calls  int
	last   memory.ChatRequest
}

func (f *fakeLLM) Chat(ctx context.Context, r memory.ChatRequest) (memory.ChatResponse, error) {
	f.calls++
	f.last = r
	return memory.ChatResponse{Content: f.answer, Model: "fake"}, f.err
}

func TestLLMQueryParsing(t *testing.T) {
	store, vectors := memory.NewMemStore(), memory.NewMemIndex(64)
	llm := &fakeLLM{answer: `{"query":"CSV import","since":"2026-03-09","until":"2026-03-16","entities":["Importer"],"task_type":""}`}
	emb := &wordEmbedder{dim: 64}
	eng, err := New(Config{NoUsage: true, LLMQueryParsing: true}, Deps{Memories: store, Index: vectors, Embedder: emb, QueryLLM: llm, Clock: fixedClock(base)})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ix, _ := index.New(index.Deps{Memories: store, Index: vectors, Embedder: emb, Cache: eng}, 0)
	if err := ix.Write(context.Background(), []memory.Memory{
		mem("acme", "lastweek", "the CSV import failed", 8*24*time.Hour),
		mem("acme", "old", "the CSV import failed", 40*24*time.Hour),
	}); err != nil {
		t.Fatal(err)
	}
	r, err := eng.Recall(context.Background(), memory.Query{Tenant: "acme", Text: "what broke in the importer the week before"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(r); !slices.Equal(got, []string{"lastweek"}) || r.Parsed.By != "llm" || r.Parsed.Text != "CSV import" ||
		!slices.Equal(r.Parsed.Entities, []string{"importer"}) {
		t.Fatalf("LLM parse: got %q, parsed %+v", got, r.Parsed)
	}
	if llm.last.Stage != memory.StageQuery || llm.last.User != "what broke in the importer the week before" || len(llm.last.Schema) == 0 {
		t.Fatalf("LLM request %+v: want the query stage, the text as the user message, a schema", llm.last)
	}

	// A failing LLM falls back to the rules.
	llm.err, llm.answer = errors.New("timeout"), ""
	r, err = eng.Recall(context.Background(), memory.Query{Tenant: "acme", Text: "CSV import last week"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Parsed.By != "rules" || r.Parsed.Time == nil || !slices.Equal(ids(r), []string{"lastweek"}) {
		t.Fatalf("fallback parse %+v, results %q", r.Parsed, ids(r))
	}
}

func TestWithEvents(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Config{NoUsage: true})
	withEvidence := mem("acme", "m1", "pin the node version in CI", 0)
	withEvidence.Evidence = []string{"ev_1", "ev_2"}
	fromSession := mem("acme", "m2", "pin the python version in CI", 0)
	fromSession.Sources = []string{memory.EpisodeID("acme", "s9")}
	if err := e.store.PutEpisode(ctx, memory.Episode{ID: memory.EpisodeID("acme", "s9"), Tenant: "acme", SessionID: "s9", Task: "ci", EndedAt: base, Status: memory.EpisodeLive}); err != nil {
		t.Fatal(err)
	}
	evs := []memory.Event{
		{ID: memory.EventID("acme", "s9", 0), Tenant: "acme", SessionID: "s9", Seq: 0, Role: memory.RoleUser, Content: "x"},
		{ID: memory.EventID("acme", "s9", 1), Tenant: "acme", SessionID: "s9", Seq: 1, Role: memory.RoleAssistant, Content: "y"},
	}
	if err := e.store.AppendEvents(ctx, evs); err != nil {
		t.Fatal(err)
	}
	e.write(t, withEvidence, fromSession)

	r := e.recall(t, memory.Query{Tenant: "acme", Text: "pin version CI"})
	for _, res := range r.Results {
		if len(res.EventIDs) > 0 || len(res.Memory.Evidence) > 0 {
			t.Fatalf("event IDs returned without WithEvents: %+v", res)
		}
	}
	r = e.recall(t, memory.Query{Tenant: "acme", Text: "pin version CI", WithEvents: true})
	got := map[string][]string{}
	for _, res := range r.Results {
		got[res.Memory.ID] = res.EventIDs
	}
	if !slices.Equal(got["m1"], []string{"ev_1", "ev_2"}) || !slices.Equal(got["m2"], []string{evs[0].ID, evs[1].ID}) {
		t.Fatalf("WithEvents: %v; want m1's evidence and m2's session events", got)
	}
}

func TestConfigValidation(t *testing.T) {
	store := memory.NewMemStore()
	for _, c := range []Config{
		{Fusion: "max"},
		{TimeHints: "maybe"},
		{VectorShare: 2},
		{DefaultTopK: 60},
		{Context: 1.5},
		{Weights: Weights{Relevance: -1, Recency: 1}},
	} {
		if _, err := New(c, Deps{Memories: store}); !memory.IsInvalid(err) {
			t.Errorf("New(%+v) = %v, want EINVALID", c, err)
		}
	}
	if _, err := New(Config{}, Deps{}); !memory.IsInvalid(err) {
		t.Errorf("New without a store = %v, want EINVALID", err)
	}
	if _, err := New(Config{}, Deps{Memories: store, Index: memory.NewMemIndex(4)}); !memory.IsInvalid(err) {
		t.Errorf("New with an index but no embedder = %v, want EINVALID", err)
	}
}

func TestConcurrentRecallsAndWrites(t *testing.T) {
	e := newEnv(t, Config{RefreshInterval: time.Nanosecond})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 20 {
				m := mem("acme", "m"+string(rune('a'+w))+string(rune('a'+i)), "shared deploy notes", time.Duration(i)*time.Minute)
				if err := e.indexer.Write(context.Background(), []memory.Memory{m}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 20 {
				if _, err := e.engine.Recall(context.Background(), memory.Query{Tenant: "acme", Text: "deploy notes"}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := e.engine.Refresh(context.Background(), "acme"); err != nil {
		t.Fatal(err)
	}
	if n := len(e.recall(t, memory.Query{Tenant: "acme", Text: "deploy notes", TopK: 50}).Results); n != 50 {
		t.Fatalf("after 80 concurrent writes recall returns %d of 50", n)
	}
}

func TestSimilarFindsSharedWordsWithinTheFilter(t *testing.T) {
	ctx := context.Background()
	store := memory.NewMemStore()
	e, err := New(Config{}, Deps{Memories: store})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	mk := func(id string, kind memory.Kind, status memory.Status, content string) memory.Memory {
		return memory.Memory{ID: id, Tenant: "t", Version: 1, Kind: kind, Status: status, Content: content,
			ContentHash: memory.ContentHash(kind, content), Confidence: 0.5, Decay: 1, CreatedAt: now, UpdatedAt: now}
	}
	if err := store.PutMemories(ctx, []memory.Memory{
		mk("utc", memory.KindPreference, memory.StatusLive, "Always give report timestamps in UTC."),
		mk("old", memory.KindPreference, memory.StatusSuperseded, "Report timestamps in local time."),
		mk("lesson", memory.KindLesson, memory.StatusLive, "Reports time out after 30s; page them."),
		mk("other", memory.KindPreference, memory.StatusLive, "Use tabs for indentation."),
	}); err != nil {
		t.Fatal(err)
	}
	got, err := e.Similar(ctx, "Reports should use Beijing time (UTC+8), not UTC.", memory.VectorFilter{
		Tenant: "t", Kinds: []memory.Kind{memory.KindPreference}, Statuses: []string{string(memory.StatusLive)},
	}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || got[0] != "utc" {
		t.Fatalf("Similar = %v, want the live preference sharing the most words first", got)
	}
	for _, id := range got {
		if id == "old" || id == "lesson" {
			t.Fatalf("Similar returned %s, which the filter excludes (superseded, or another kind)", id)
		}
	}
	if _, err := e.Similar(ctx, "x", memory.VectorFilter{}, 5); !memory.IsInvalid(err) {
		t.Fatalf("Similar without a tenant = %v, want EINVALID", err)
	}
}
