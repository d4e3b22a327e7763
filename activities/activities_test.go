package activities_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/index"
	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/llm"
	"github.com/hindsight-memory/hindsight/llm/offline"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/merge"
	"github.com/hindsight-memory/hindsight/plan"
	"github.com/hindsight-memory/hindsight/recall"
)

type fixture struct {
	acts  *activities.Activities
	store *memory.MemStore
	index *memory.MemIndex
	env   *testsuite.TestActivityEnvironment
}

func newFixture(t *testing.T) *fixture { return newFixtureWith(t, false) }

// newFixtureWith builds the fixture; with keywords its indexer writes
// sparse keyword vectors and term statistics, as with Milvus.
func newFixtureWith(t *testing.T, keywords bool) *fixture {
	t.Helper()
	store := memory.NewMemStore()
	return newFixtureOn(t, store, store, keywords)
}

// fixtureStore is what the fixture's activities and indexer write to: the
// MemStore, or a wrapper of it that fails on cue.
type fixtureStore interface {
	memory.EpisodicStore
	memory.TermStats
}

// newFixtureOn builds the fixture over backing, written through store.
func newFixtureOn(t *testing.T, backing *memory.MemStore, store fixtureStore, keywords bool) *fixture {
	t.Helper()
	emb := offline.NewEmbedder(64)
	vectors := memory.NewMemIndex(emb.Dim())
	engine, err := recall.New(recall.Config{}, recall.Deps{Memories: store, Episodes: store, Index: vectors, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close() })
	ideps := index.Deps{Memories: store, Index: vectors, Embedder: emb, Cache: engine}
	if keywords {
		ideps.Keywords = index.NewKeywords(store)
	}
	ix, err := index.New(ideps, 0)
	if err != nil {
		t.Fatal(err)
	}
	acts := &activities.Activities{
		Store: store, Index: vectors, Embedder: emb, Extractor: offline.NewExtractor(),
		Judge: merge.NewOfflineJudge(merge.OfflineOptions{}), Indexer: ix, Keywords: engine,
		Merge: activities.MergeConfig{Threshold: merge.ThresholdFor(emb.Model()), MaxNeighbors: 5, KeywordNeighbors: 3, Lifecycle: memory.DefaultLifecycle},
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(acts)
	return &fixture{acts: acts, store: backing, index: vectors, env: env}
}

func run[T any](t *testing.T, f *fixture, fn any, args ...any) T {
	t.Helper()
	v, err := f.env.ExecuteActivity(fn, args...)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := v.Get(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

var now = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// TestApplyDecisionIsIdempotent applies one planned decision twice, the
// second time as a retry after the first already landed: one version, one
// logged decision.
func TestApplyDecisionIsIdempotent(t *testing.T) {
	f := newFixture(t)
	in := activities.PlanMergeInput{Tenant: "acme", RequestID: "r1", EpisodeID: "ep1", Now: now,
		Candidate: memory.Candidate{Kind: memory.KindPreference, Content: "Give report timestamps in UTC."}}
	d := run[memory.Decision](t, f, f.acts.PlanMerge, in)
	if d.Verdict != memory.VerdictDistinct || len(d.After) != 1 {
		t.Fatalf("plan for a new memory = %+v", d)
	}
	first := run[memory.Decision](t, f, f.acts.ApplyDecision, d)
	again := run[memory.Decision](t, f, f.acts.ApplyDecision, d)
	if first.ID != again.ID {
		t.Fatalf("retry returned another decision: %s vs %s", first.ID, again.ID)
	}
	h, err := f.store.History(context.Background(), "acme", d.After[0].ID)
	if err != nil || len(h) != 1 {
		t.Fatalf("history after a retried apply = %d versions (%v), want 1", len(h), err)
	}
	ds, _ := f.store.Decisions(context.Background(), memory.DecisionFilter{Tenant: "acme"})
	if len(ds) != 1 {
		t.Fatalf("decisions after a retried apply = %d, want 1", len(ds))
	}
	// Planning the same candidate of the same request again replays the
	// logged decision instead of judging the memory against itself.
	if replay := run[memory.Decision](t, f, f.acts.PlanMerge, in); replay.ID != d.ID || replay.Verdict != memory.VerdictDistinct {
		t.Fatalf("re-planning an applied candidate = %+v", replay)
	}
	// The same content from another session is an exact duplicate.
	dup := run[memory.Decision](t, f, f.acts.PlanMerge, activities.PlanMergeInput{Tenant: "acme", RequestID: "r2", EpisodeID: "ep2", Now: now,
		Candidate: memory.Candidate{Kind: memory.KindPreference, Content: "give report timestamps in UTC"}})
	if dup.Verdict != memory.VerdictDuplicate || dup.Judge != plan.JudgeExact || dup.TargetID != d.After[0].ID {
		t.Fatalf("exact duplicate = %+v", dup)
	}
}

// TestApplyDecisionRefusesAStalePlan writes a plan, then applies an older
// plan made against the previous version: ECONFLICT, nothing written.
func TestApplyDecisionRefusesAStalePlan(t *testing.T) {
	f := newFixture(t)
	d := run[memory.Decision](t, f, f.acts.PlanMerge, activities.PlanMergeInput{Tenant: "acme", RequestID: "r1", EpisodeID: "ep1", Now: now,
		Candidate: memory.Candidate{Kind: memory.KindRule, Content: "Never deploy to production on Fridays."}})
	run[memory.Decision](t, f, f.acts.ApplyDecision, d)
	plan := func(req, ep string) memory.Decision {
		return run[memory.Decision](t, f, f.acts.PlanMerge, activities.PlanMergeInput{Tenant: "acme", RequestID: req, EpisodeID: ep, Now: now,
			Candidate: memory.Candidate{Kind: memory.KindRule, Content: "never deploy to production on fridays"}})
	}
	a, b := plan("r2", "ep2"), plan("r3", "ep3") // both read version 1
	run[memory.Decision](t, f, f.acts.ApplyDecision, a)
	if _, err := f.env.ExecuteActivity(f.acts.ApplyDecision, b); err == nil {
		t.Fatal("a plan made against an older version was applied")
	}
	m, _ := f.store.Memory(context.Background(), "acme", d.After[0].ID)
	if m.Version != 2 || !slices.Equal(m.Sources, []string{"ep1", "ep2"}) {
		t.Fatalf("memory after the refused plan = v%d %v", m.Version, m.Sources)
	}
}

// TestReconcileIndexRepairsDrift breaks the vector index every way it can
// drift from the store, reconciles, and checks a second pass finds nothing.
func TestReconcileIndexRepairsDrift(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var ids []string
	for i, c := range []string{"Give report timestamps in UTC.", "Never deploy on Fridays.", "Use gbk for sales.csv."} {
		d := run[memory.Decision](t, f, f.acts.PlanMerge, activities.PlanMergeInput{Tenant: "acme", RequestID: "r", Index: i, EpisodeID: "ep1", Now: now,
			Candidate: memory.Candidate{Kind: memory.KindFact, Content: c}})
		run[memory.Decision](t, f, f.acts.ApplyDecision, d)
		ids = append(ids, d.After[0].ID)
	}
	ep := memory.Episode{ID: "ep1", Tenant: "acme", SessionID: "s1", Task: "weekly report", Status: memory.EpisodeLive, EndedAt: now, CreatedAt: now}
	if err := f.store.PutEpisode(ctx, ep); err != nil {
		t.Fatal(err)
	}
	// Drift: a vector lost, a stray vector, a stale status, an unindexed episode.
	must(t, f.index.Delete(ctx, memory.CollectionMemories, "acme", ids[:1]))
	stray := memory.VectorDoc{ID: "ghost", Tenant: "acme", Vector: make([]float32, 64), Status: "live"}
	stray.Vector[0] = 1
	must(t, f.index.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{stray}))
	docs, _ := f.index.Get(ctx, memory.CollectionMemories, "acme", ids[1:2])
	docs[0].Status = string(memory.StatusCold)
	must(t, f.index.Upsert(ctx, memory.CollectionMemories, docs))

	rep := run[activities.ReconcileReport](t, f, f.acts.ReconcileIndex, "acme")
	if rep.Reindexed != 3 || rep.Removed != 1 { // lost + stale memory, missing episode; the stray
		t.Fatalf("reconcile = %+v", rep)
	}
	got, _ := f.index.Get(ctx, memory.CollectionMemories, "acme", append(slices.Clone(ids), "ghost"))
	if len(got) != 3 || slices.ContainsFunc(got, func(d memory.VectorDoc) bool { return d.ID == "ghost" || d.Status != "live" }) {
		t.Fatalf("index after reconcile = %+v", got)
	}
	if eps, _ := f.index.Get(ctx, memory.CollectionEpisodes, "acme", []string{"ep1"}); len(eps) != 1 {
		t.Fatal("the episode was not indexed")
	}
	if again := run[activities.ReconcileReport](t, f, f.acts.ReconcileIndex, "acme"); again.Reindexed != 0 || again.Removed != 0 {
		t.Fatalf("second reconcile = %+v, want nothing to do", again)
	}
}

// TestReindexWritesKeywordVectors: memories stored without keyword
// vectors or term statistics (before them, or by a lost write) get both
// from the reindex, which reconciles every memory the index lacks.
func TestReindexWritesKeywordVectors(t *testing.T) {
	f := newFixtureWith(t, true)
	ctx := context.Background()
	at := now.Add(-time.Hour)
	var ms []memory.Memory
	for i, c := range []string{"Give report timestamps in UTC.", "Never deploy on Fridays."} {
		ms = append(ms, memory.Memory{ID: []string{"m1", "m2"}[i], Tenant: "acme", Version: 1, Kind: memory.KindFact, Content: c,
			ContentHash: memory.ContentHash(memory.KindFact, c), Confidence: 0.6, Status: memory.StatusLive,
			Decay: 1, DecayAnchor: at, ValidFrom: at, CreatedAt: at, UpdatedAt: at})
	}
	must(t, f.store.PutMemories(ctx, ms))
	if rep := run[activities.ReconcileReport](t, f, f.acts.ReconcileIndex, "acme"); rep.Reindexed != 2 {
		t.Fatalf("reconcile = %+v, want both memories indexed", rep)
	}
	docs, err := f.index.Get(ctx, memory.CollectionMemories, "acme", []string{"m1", "m2"})
	must(t, err)
	if len(docs) != 2 || slices.ContainsFunc(docs, func(d memory.VectorDoc) bool { return d.Sparse.IsZero() }) {
		t.Fatalf("reindexed documents %+v, want each with its keyword vector", docs)
	}
	deploy, stamp := lang.Terms("deploy")[0], lang.Terms("timestamps")[0]
	c, err := f.store.TermStats(ctx, "acme", []string{deploy, stamp})
	must(t, err)
	if c.Docs != 2 || c.Terms[deploy].Docs != 1 || c.Terms[stamp].Docs != 1 {
		t.Fatalf("term statistics after the reindex %+v, want two memories, one with each term", c)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// modelLLM is a language model that must not be asked.
type modelLLM struct{ asked int }

func (m *modelLLM) Chat(context.Context, memory.ChatRequest) (memory.ChatResponse, error) {
	m.asked++
	return memory.ChatResponse{}, context.Canceled
}

// TestExtractInProcessOnlyWithoutAModel: the local-activity extraction
// extracts with the offline extractor, and leaves a model-backed one to
// ExtractEpisode (answering Remote without asking the model).
func TestExtractInProcessOnlyWithoutAModel(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ref := activities.SessionRef{Tenant: "acme", SessionID: "s1"}
	var events []memory.Event
	for i, text := range []string{"Please import sales.csv into the reports table.", "The import failed: invalid UTF-8. Reading it with encoding='gbk' worked."} {
		role := memory.RoleUser
		if i == 1 {
			role = memory.RoleAssistant
		}
		events = append(events, memory.Event{ID: memory.EventID("acme", "s1", i), Tenant: "acme", SessionID: "s1", Seq: i, Role: role, Content: text, TS: now.Add(time.Duration(i) * time.Minute)})
	}
	if err := f.store.AppendEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	in := activities.ExtractInput{Session: ref, Now: now}

	local := run[activities.LocalExtraction](t, f, f.acts.ExtractInProcess, in)
	want := run[memory.Extraction](t, f, f.acts.ExtractEpisode, in)
	if local.Remote || local.Extraction.Episode.ID != memory.EpisodeID("acme", "s1") || local.Extraction.Episode.EventCount != 2 ||
		len(local.Extraction.Candidates) != len(want.Candidates) {
		t.Fatalf("offline extractor in process: %+v, want the extraction ExtractEpisode gives (%d candidates)", local, len(want.Candidates))
	}

	m := &modelLLM{}
	f.acts.Extractor = llm.NewExtractor(m)
	if got := run[activities.LocalExtraction](t, f, f.acts.ExtractInProcess, in); !got.Remote || got.Extraction.Episode.ID != "" || m.asked != 0 {
		t.Fatalf("model-backed extractor in process: %+v after %d model calls, want Remote and no call", got, m.asked)
	}
}
