package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hindsight-memory/hindsight/internal/histories"
	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/service"
	"github.com/hindsight-memory/hindsight/workflows"
)

// chat is a small session in which the user states something.
func chat(session string, day int, userSays ...string) map[string]any {
	ts := time.Date(2026, 3, day, 9, 0, 0, 0, time.UTC)
	evs := []map[string]any{{"role": "user", "content": "Please build the weekly sales report.", "ts": ts.Format(time.RFC3339)}}
	for i, s := range userSays {
		evs = append(evs,
			map[string]any{"role": "assistant", "content": "Working on it.", "ts": ts.Add(time.Duration(2*i+1) * time.Minute).Format(time.RFC3339)},
			map[string]any{"role": "user", "content": s, "ts": ts.Add(time.Duration(2*i+2) * time.Minute).Format(time.RFC3339)})
	}
	evs = append(evs, map[string]any{"role": "user", "content": "Thanks, that works.", "ts": ts.Add(time.Hour).Format(time.RFC3339)})
	return map[string]any{"session_id": session, "events": evs, "outcome": "success"}
}

func endSession(t *testing.T, s *mcp.ClientSession, args map[string]any) mcpserver.EndOutput {
	t.Helper()
	args["wait"] = true
	return call[mcpserver.EndOutput](t, s, mcpserver.ToolEnd, args)
}

// preferenceOf returns the statement (a preference, rule or fact: the
// classifier's call) a session's distillation ended in.
func preferenceOf(t *testing.T, end mcpserver.EndOutput) mcpserver.EndMemory {
	t.Helper()
	for _, m := range end.Memories {
		if m.Kind != memory.KindLesson {
			return m
		}
	}
	t.Fatalf("session %s distilled no preference: %+v", end.WorkflowID, end.Memories)
	return mcpserver.EndMemory{}
}

func history(t *testing.T, s *mcp.ClientSession, id string) service.History {
	t.Helper()
	return call[service.History](t, s, mcpserver.ToolHistory, map[string]any{"memory_id": id})
}

func current(t *testing.T, h service.History) memory.Memory {
	t.Helper()
	if len(h.Versions) == 0 {
		t.Fatal("a memory without versions")
	}
	return h.Versions[len(h.Versions)-1]
}

// TestMergeScenarios runs the seeds' consolidation scenarios end to end over
// MCP on the real embedded Temporal server: a preference stated twice, a
// preference changed, an undo, and two sessions that end at once.
func TestMergeScenarios(t *testing.T) {
	st := startTestDev(t, t.TempDir())
	defer st.Close()
	s := connect(t, st.mcpURL())
	ctx := context.Background()

	// 1. The same preference in two sessions: one memory, two sources,
	// higher confidence.
	a := endSession(t, s, chat("pref-a", 2, "From now on, always give report timestamps in UTC."))
	b := endSession(t, s, chat("pref-b", 9, "Remember: always give report timestamps in UTC."))
	pa, pb := preferenceOf(t, a), preferenceOf(t, b)
	if pb.MemoryID != pa.MemoryID || pb.Verdict != memory.VerdictDuplicate {
		t.Fatalf("the second statement became %s (%s), want a duplicate of %s", pb.MemoryID, pb.Verdict, pa.MemoryID)
	}
	utc := current(t, history(t, s, pa.MemoryID))
	if !slices.Equal(utc.Sources, []string{a.EpisodeID, b.EpisodeID}) {
		t.Fatalf("sources = %v, want both episodes", utc.Sources)
	}
	first := history(t, s, pa.MemoryID).Versions[0]
	if utc.Confidence <= first.Confidence {
		t.Fatalf("confidence %v → %v, want it raised by the second source", first.Confidence, utc.Confidence)
	}

	// 2. The preference changes: recall returns the new one first; the old
	// one is superseded and traceable.
	c := endSession(t, s, chat("pref-c", 16, "From now on, give report timestamps in Beijing time."))
	pc := preferenceOf(t, c)
	if pc.Verdict != memory.VerdictConflicts || pc.MemoryID == pa.MemoryID {
		t.Fatalf("the changed preference = %+v, want a new memory that conflicts with %s", pc, pa.MemoryID)
	}
	rec := call[mcpserver.RecallOutput](t, s, mcpserver.ToolRecall, map[string]any{"query": "which time zone for report timestamps?"})
	if len(rec.Results) == 0 || rec.Results[0].MemoryID != pc.MemoryID {
		t.Fatalf("recall after the change = %+v, want %s first", rec.Results, pc.MemoryID)
	}
	if findResult(rec, pa.MemoryID) != nil {
		t.Fatalf("default recall still returns the superseded %s", pa.MemoryID)
	}
	old := current(t, history(t, s, pa.MemoryID))
	if old.Status != memory.StatusSuperseded || old.SupersededBy != pc.MemoryID || old.ValidTo.IsZero() || old.Confidence >= utc.Confidence {
		t.Fatalf("the old preference after the change = %+v, want superseded by %s, valid_to set, confidence lowered", old, pc.MemoryID)
	}
	withOld := call[mcpserver.RecallOutput](t, s, mcpserver.ToolRecall, map[string]any{"query": "which time zone for report timestamps?", "include_superseded": true})
	if it := findResult(withOld, pa.MemoryID); it == nil || it.SupersededBy != pc.MemoryID {
		t.Fatalf("recall with include_superseded = %+v, want the old one marked superseded by %s", withOld.Results, pc.MemoryID)
	}
	if !strings.Contains(withOld.Context, "superseded") {
		t.Fatalf("the context block does not mark the superseded memory:\n%s", withOld.Context)
	}

	// 3. Undo the conflict (as `hindsight merge undo` does): the UTC
	// preference is live again and the Beijing one retired.
	reply, err := service.CallLedger(ctx, st.client, "hindsight-e2e", ledger.Request{
		Tenant: memory.DefaultTenant, Op: ledger.OpUndo, DecisionID: pc.DecisionID,
	}, time.Minute)
	if err != nil {
		t.Fatalf("undo %s: %v", pc.DecisionID, err)
	}
	restored := current(t, history(t, s, pa.MemoryID))
	if restored.Status != memory.StatusLive || restored.SupersededBy != "" || restored.Content != utc.Content ||
		restored.Confidence != utc.Confidence || !slices.Equal(restored.Sources, utc.Sources) {
		t.Fatalf("after undo the UTC preference = %+v, want its state before the conflict %+v", restored, utc)
	}
	if bj := current(t, history(t, s, pc.MemoryID)); bj.Status == memory.StatusLive {
		t.Fatalf("after undo the Beijing preference is still live: %+v", bj)
	}
	rec = call[mcpserver.RecallOutput](t, s, mcpserver.ToolRecall, map[string]any{"query": "which time zone for report timestamps?"})
	if len(rec.Results) == 0 || rec.Results[0].MemoryID != pa.MemoryID || findResult(rec, pc.MemoryID) != nil {
		t.Fatalf("recall after undo = %+v, want %s back and %s gone", rec.Results, pa.MemoryID, pc.MemoryID)
	}
	if len(reply.Decisions) != 1 || reply.Decisions[0].Undoes != pc.DecisionID {
		t.Fatalf("undo reply = %+v", reply)
	}
	// Undoing again changes nothing.
	if _, err := service.CallLedger(ctx, st.client, "hindsight-e2e", ledger.Request{
		Tenant: memory.DefaultTenant, Op: ledger.OpUndo, DecisionID: pc.DecisionID,
	}, time.Minute); err != nil {
		t.Fatalf("second undo: %v", err)
	}
	if again := current(t, history(t, s, pa.MemoryID)); again.Version != restored.Version {
		t.Fatalf("a second undo wrote version %d", again.Version)
	}

	// 4. Sessions that end at once and touch the same memory lose no
	// update: the ledger applies their merges one after the other.
	const n = 8
	var wg sync.WaitGroup
	ends := make([]mcpserver.EndOutput, n)
	errs := make([]error, n)
	clients := make([]*mcp.ClientSession, n)
	for i := range clients {
		clients[i] = connect(t, st.mcpURL())
	}
	for i, cs := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := chat(fmt.Sprintf("pref-concurrent-%d", i), 20+i, "Always give report timestamps in UTC, please.")
			args["wait"] = true
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolEnd, Arguments: args})
			if err == nil && res.IsError {
				err = fmt.Errorf("%s", toolText(res))
			}
			if err == nil {
				ends[i], err = decode[mcpserver.EndOutput](res)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	want := slices.Clone(restored.Sources)
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("concurrent session %d: %v", i, errs[i])
		}
		want = append(want, ends[i].EpisodeID)
	}
	final := current(t, history(t, s, pa.MemoryID))
	got := slices.Clone(final.Sources)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("after %d concurrent sessions the sources are %v, want %v: an update was lost", n, got, want)
	}
	if final.Version != restored.Version+n {
		t.Fatalf("version %d → %d, want one new version per session", restored.Version, final.Version)
	}
}

func decode[T any](res *mcp.CallToolResult) (T, error) {
	var out T
	raw, err := jsonMarshal(res.StructuredContent)
	if err != nil {
		return out, err
	}
	return out, jsonUnmarshal(raw, &out)
}

// TestForgetUser forgets a user: their sessions, events and episodes go,
// memories learned only from them go, a memory they share with another
// user is rebuilt without them, and recall returns nothing of them.
func TestForgetUser(t *testing.T) {
	st := startTestDev(t, t.TempDir())
	defer st.Close()
	s := connect(t, st.mcpURL())
	ctx := context.Background()

	withUser := func(args map[string]any, user string) map[string]any { args["user_id"] = user; return args }
	a1 := endSession(t, s, withUser(chat("u1-a", 2, "From now on, always give report timestamps in UTC."), "u1"))
	a2 := endSession(t, s, withUser(chat("u1-b", 3, "Never deploy to production on Fridays."), "u1"))
	b1 := endSession(t, s, withUser(chat("u2-a", 4, "Remember: always give report timestamps in UTC."), "u2"))
	shared, only := preferenceOf(t, a1), mcpserver.EndMemory{}
	for _, m := range a2.Memories {
		if m.Kind == memory.KindRule {
			only = m
		}
	}
	if only.MemoryID == "" || preferenceOf(t, b1).MemoryID != shared.MemoryID {
		t.Fatalf("setup: rule %+v, shared preference %s vs %s", only, shared.MemoryID, preferenceOf(t, b1).MemoryID)
	}

	r := call[mcpserver.ForgetOutput](t, s, mcpserver.ToolForget, map[string]any{"user_id": "u1"})
	histories.Record(t, st.client, workflows.ForgetWorkflowID(ledger.ForgetInput{Tenant: memory.DefaultTenant, UserID: "u1"}), "", "forget")
	if !slices.Equal(r.Sessions, []string{"u1-a", "u1-b"}) || len(r.Episodes) != 2 {
		t.Fatalf("receipt sessions/episodes = %v / %v", r.Sessions, r.Episodes)
	}
	if !slices.Contains(r.Memories, only.MemoryID) || slices.Contains(r.Memories, shared.MemoryID) || !slices.Equal(r.Rebuilt, []string{shared.MemoryID}) {
		t.Fatalf("receipt memories = %v, rebuilt %v: want %s deleted and %s rebuilt", r.Memories, r.Rebuilt, only.MemoryID, shared.MemoryID)
	}
	if r.ClickHouse.Events == 0 || r.ClickHouse.Episodes != 2 || r.ClickHouse.Versions == 0 || r.Vectors.Memories == 0 || r.Vectors.Episodes != 2 {
		t.Fatalf("receipt counts = %+v / %+v", r.ClickHouse, r.Vectors)
	}

	// Nothing of u1 is left in either store.
	for _, sess := range []string{"u1-a", "u1-b"} {
		if evs, err := st.runtime.Store.SessionEvents(ctx, memory.DefaultTenant, sess); err != nil || len(evs) != 0 {
			t.Fatalf("events of %s after forget: %d (%v)", sess, len(evs), err)
		}
		if _, err := st.runtime.Store.Episode(ctx, memory.DefaultTenant, memory.EpisodeID(memory.DefaultTenant, sess)); !memory.IsNotFound(err) {
			t.Fatalf("episode of %s after forget: %v", sess, err)
		}
	}
	if docs, _ := st.runtime.Index.Get(ctx, memory.CollectionMemories, memory.DefaultTenant, []string{only.MemoryID}); len(docs) != 0 {
		t.Fatalf("the forgotten rule still has a vector")
	}
	if h, err := st.runtime.Store.History(ctx, memory.DefaultTenant, only.MemoryID); err != nil || slices.ContainsFunc(h, func(m memory.Memory) bool { return m.Content != "" }) {
		t.Fatalf("text of the forgotten rule survives in its history: %+v (%v)", h, err)
	}
	rec := call[mcpserver.RecallOutput](t, s, mcpserver.ToolRecall, map[string]any{"query": "deploy to production on Fridays", "include_cold": true, "include_superseded": true})
	if findResult(rec, only.MemoryID) != nil || strings.Contains(rec.Context, "Fridays") {
		t.Fatalf("recall still knows u1's rule: %+v", rec.Results)
	}
	rec = call[mcpserver.RecallOutput](t, s, mcpserver.ToolRecall, map[string]any{"query": "report timestamps time zone"})
	it := findResult(rec, shared.MemoryID)
	if it == nil || !slices.Equal(it.SourceEpisodes, []string{b1.EpisodeID}) {
		t.Fatalf("the shared preference after forgetting u1 = %+v, want it with only u2's episode %s", it, b1.EpisodeID)
	}

	// Forgetting again finds nothing more.
	again := call[mcpserver.ForgetOutput](t, s, mcpserver.ToolForget, map[string]any{"user_id": "u1"})
	if len(again.Memories) != 0 || len(again.Rebuilt) != 0 || again.ClickHouse.Events != 0 {
		t.Fatalf("second forget = %+v", again)
	}
}
