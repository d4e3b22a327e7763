package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// base is a fixed instant with milliseconds, so that stores that keep
// DateTime64(3) must keep sub-second precision to pass.
var base = time.Date(2026, 3, 2, 9, 30, 15, 123_000_000, time.UTC)

// NewEpisodicStore returns a fresh, empty store for one subtest. Stores that
// share a server must isolate subtests (e.g. by database); tenants are also
// unique per subtest.
type NewEpisodicStore func(t *testing.T) memory.EpisodicStore

// TestEpisodicStore runs the acceptance suite for memory.EpisodicStore.
func TestEpisodicStore(t *testing.T, newStore NewEpisodicStore) {
	t.Run("EventsAppendIdempotentOrdered", func(t *testing.T) { testEvents(t, newStore(t)) })
	t.Run("EventsRejectInvalidBatch", func(t *testing.T) { testEventsInvalid(t, newStore(t)) })
	t.Run("EventsTenantIsolation", func(t *testing.T) { testEventsTenants(t, newStore(t)) })
	t.Run("SessionsOfUser", func(t *testing.T) { testSessions(t, newStore(t)) })
	t.Run("EpisodesPutGetFilter", func(t *testing.T) { testEpisodes(t, newStore(t)) })
	t.Run("EpisodesArchive", func(t *testing.T) { testArchive(t, newStore(t)) })
	t.Run("MemoryVersions", func(t *testing.T) { testMemoryVersions(t, newStore(t)) })
	t.Run("MemoryFilters", func(t *testing.T) { testMemoryFilters(t, newStore(t)) })
	t.Run("MemoriesPagedByID", func(t *testing.T) { testMemoriesByID(t, newStore(t)) })
	t.Run("MemoryUsage", func(t *testing.T) { testUsage(t, newStore(t)) })
	t.Run("Decisions", func(t *testing.T) { testDecisions(t, newStore(t)) })
	t.Run("Purge", func(t *testing.T) { testPurge(t, newStore(t)) })
	t.Run("UnicodeRoundTrip", func(t *testing.T) { testUnicode(t, newStore(t)) })
	t.Run("Settings", func(t *testing.T) { testSettings(t, newStore(t)) })
	t.Run("EventsFirstWriteWins", func(t *testing.T) { testEventsFirstWrite(t, newStore(t)) })
	t.Run("EpisodeRewriteMovesTime", func(t *testing.T) { testEpisodeRewrite(t, newStore(t)) })
	t.Run("EpisodePutColdAndBack", func(t *testing.T) { testEpisodeCold(t, newStore(t)) })
	t.Run("MemoryStatusAcrossWrites", func(t *testing.T) { testMemoryStatusAcrossWrites(t, newStore(t)) })
	t.Run("DecisionsFirstWriteWins", func(t *testing.T) { testDecisionFirstWrite(t, newStore(t)) })
	t.Run("TenantsListed", func(t *testing.T) { testTenants(t, newStore(t)) })
	t.Run("TermStats", func(t *testing.T) { testTermStats(t, newStore(t)) })
}

var tenantSeq atomic.Int64

// Tenant returns a tenant name unique to this process and call, so that
// suites sharing a server never see each other's rows.
func Tenant(t *testing.T) string {
	return fmt.Sprintf("t%x%d", time.Now().UnixNano()%(1<<40), tenantSeq.Add(1))
}

func events(tenant, session string, n int) []memory.Event {
	out := make([]memory.Event, n)
	for i := range out {
		out[i] = memory.Event{
			ID: memory.EventID(tenant, session, i), Tenant: tenant, SessionID: session, UserID: "u1",
			Seq: i, Role: memory.RoleUser, Content: fmt.Sprintf("event %d\n\nwith a blank line", i),
			TS: base.Add(time.Duration(i) * time.Second), ToolName: "shell", ToolArgs: `{"cmd":"ls"}`,
			ToolResult: "ok", Error: "", CallID: fmt.Sprintf("toolu_%d", i),
		}
	}
	return out
}

func testEvents(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	tenant := Tenant(t)
	evs := events(tenant, "s1", 5)
	// Out of order, then the same batch again: readers see 5 rows in Seq order.
	rev := slices.Clone(evs)
	slices.Reverse(rev)
	must(t, s.AppendEvents(ctx, rev))
	must(t, s.AppendEvents(ctx, evs[:3]))
	got, err := s.SessionEvents(ctx, tenant, "s1")
	must(t, err)
	if len(got) != 5 {
		t.Fatalf("SessionEvents after a retried batch = %d events, want 5", len(got))
	}
	for i, e := range got {
		want := evs[i]
		if e.Seq != i || e.ID != want.ID || e.Content != want.Content || !e.TS.Equal(want.TS) ||
			e.Role != want.Role || e.ToolName != want.ToolName || e.ToolArgs != want.ToolArgs ||
			e.ToolResult != want.ToolResult || e.UserID != want.UserID || e.CallID != want.CallID {
			t.Fatalf("event %d = %+v, want %+v", i, e, want)
		}
	}
	none, err := s.SessionEvents(ctx, tenant, "nope")
	must(t, err)
	if len(none) != 0 {
		t.Fatalf("unknown session returned %d events", len(none))
	}
	must(t, s.AppendEvents(ctx, events(tenant, "s2", 2)))
	for session, want := range map[string]int{"s1": 5, "s2": 2, "nope": 0} {
		n, err := s.SessionEventCount(ctx, tenant, session)
		must(t, err)
		if n != want {
			t.Fatalf("SessionEventCount(%s) = %d after a retried batch, want %d", session, n, want)
		}
	}
	// Whose a session is: the users its events carry, "" for none.
	mixed := events(tenant, "s3", 3)
	mixed[0].UserID, mixed[1].UserID, mixed[2].UserID = "u-2", "", "u-1"
	must(t, s.AppendEvents(ctx, mixed))
	for session, want := range map[string][]string{"s3": {"", "u-1", "u-2"}, "nope": {}} {
		users, err := s.SessionUsers(ctx, tenant, session)
		must(t, err)
		if !slices.Equal(users, want) {
			t.Fatalf("SessionUsers(%s) = %q, want %q", session, users, want)
		}
	}
}

func testEventsInvalid(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	tenant := Tenant(t)
	evs := events(tenant, "s1", 3)
	evs[2].Role = "robot"
	err := s.AppendEvents(ctx, evs)
	if !memory.IsInvalid(err) {
		t.Fatalf("AppendEvents with a bad role = %v, want EINVALID", err)
	}
	got, _ := s.SessionEvents(ctx, tenant, "s1")
	if len(got) != 0 {
		t.Fatalf("a rejected batch stored %d events", len(got))
	}
}

func testEventsTenants(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	a, b := Tenant(t)+"a", Tenant(t)+"b"
	must(t, s.AppendEvents(ctx, events(a, "s1", 2)))
	must(t, s.AppendEvents(ctx, events(b, "s1", 3)))
	got, err := s.SessionEvents(ctx, a, "s1")
	must(t, err)
	if len(got) != 2 {
		t.Fatalf("tenant a sees %d events, want 2", len(got))
	}
}

func testSessions(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	tenant := Tenant(t)
	a := events(tenant, "s-a", 2)
	b := events(tenant, "s-b", 1)
	b[0].UserID = "u2"
	must(t, s.AppendEvents(ctx, append(append(a, b...), events(tenant+"x", "s-c", 1)...)))
	for _, tt := range []struct {
		user string
		want []string
	}{{"u1", []string{"s-a"}}, {"u2", []string{"s-b"}}, {"", []string{"s-a", "s-b"}}, {"nobody", []string{}}} {
		got, err := s.Sessions(ctx, tenant, tt.user)
		must(t, err)
		if !slices.Equal(got, tt.want) {
			t.Fatalf("Sessions(user %q) = %v, want %v", tt.user, got, tt.want)
		}
	}
}

func episode(tenant, session string, ended time.Time, taskType string) memory.Episode {
	return memory.Episode{
		ID: memory.EpisodeID(tenant, session), Tenant: tenant, SessionID: session, UserID: "u1", Agent: "agent",
		Task: "import the sales CSV", TaskType: taskType, Entities: []string{"csv", "gbk"},
		Steps:    []string{"detect encoding", "parse with gbk"},
		Failures: []memory.Failure{{Attempt: "read as utf-8", Cause: "UnicodeDecodeError", EventID: "ev_x"}},
		Outcome:  memory.OutcomeSuccess, Feedback: []string{"great"},
		StartedAt: ended.Add(-time.Minute), EndedAt: ended, EventCount: 7,
		Status: memory.EpisodeLive, Extractor: "offline", CreatedAt: ended.Add(time.Second),
	}
}

func testEpisodes(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	tenant := Tenant(t)
	e1 := episode(tenant, "s1", base, "data-import")
	e2 := episode(tenant, "s2", base.Add(24*time.Hour), "report")
	e3 := episode(tenant, "s3", base.Add(48*time.Hour), "data-import")
	e3.Entities = append(e3.Entities, "billing")
	e3.Project, e3.ProjectName = "git:9f2c1e", "billing"
	for _, e := range []memory.Episode{e1, e2, e3, e1} { // e1 twice: idempotent
		must(t, s.PutEpisode(ctx, e))
	}
	got, err := s.Episode(ctx, tenant, e1.ID)
	must(t, err)
	if !episodesEqual(got, e1) {
		t.Fatalf("Episode round trip:\n got %+v\nwant %+v", got, e1)
	}
	if _, err := s.Episode(ctx, tenant+"x", e1.ID); !memory.IsNotFound(err) {
		t.Fatalf("Episode of another tenant = %v, want ENOTFOUND", err)
	}
	all, err := s.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant})
	must(t, err)
	if ids := episodeIDs(all); !slices.Equal(ids, []string{e3.ID, e2.ID, e1.ID}) {
		t.Fatalf("Episodes newest first = %v", ids)
	}
	typed, err := s.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, TaskType: "data-import"})
	must(t, err)
	if ids := episodeIDs(typed); !slices.Equal(ids, []string{e3.ID, e1.ID}) {
		t.Fatalf("Episodes by task type = %v", ids)
	}
	ranged, err := s.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, Since: base.Add(time.Hour), Until: base.Add(48 * time.Hour)})
	must(t, err)
	if ids := episodeIDs(ranged); !slices.Equal(ids, []string{e2.ID}) {
		t.Fatalf("Episodes in [since, until) = %v, want only s2", ids)
	}
	limited, err := s.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, Limit: 1})
	must(t, err)
	if len(limited) != 1 || limited[0].ID != e3.ID {
		t.Fatalf("Episodes limit 1 = %v", episodeIDs(limited))
	}
	bySession, err := s.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, SessionID: "s2"})
	must(t, err)
	if ids := episodeIDs(bySession); !slices.Equal(ids, []string{e2.ID}) {
		t.Fatalf("Episodes by session = %v", ids)
	}
	inProject, err := s.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, Entity: "billing", Limit: 5})
	must(t, err)
	if ids := episodeIDs(inProject); !slices.Equal(ids, []string{e3.ID}) {
		t.Fatalf("Episodes by entity = %v, want only s3", ids)
	}
	byProject, err := s.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, Project: "git:9f2c1e"})
	must(t, err)
	if len(byProject) != 1 || byProject[0].ID != e3.ID || byProject[0].Project != e3.Project || byProject[0].ProjectName != "billing" {
		t.Fatalf("Episodes by project = %+v, want only s3 with its project", byProject)
	}
	// Replacing an episode changes what readers see.
	e2.Outcome = memory.OutcomeFailure
	must(t, s.PutEpisode(ctx, e2))
	got, err = s.Episode(ctx, tenant, e2.ID)
	must(t, err)
	if got.Outcome != memory.OutcomeFailure {
		t.Fatalf("replaced episode outcome = %s", got.Outcome)
	}
	if err := s.PutEpisode(ctx, memory.Episode{Tenant: tenant}); !memory.IsInvalid(err) {
		t.Fatalf("PutEpisode without ID = %v, want EINVALID", err)
	}
}

func testArchive(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	tenant := Tenant(t)
	e1 := episode(tenant, "s1", base, "x")
	e2 := episode(tenant, "s2", base.Add(time.Hour), "x")
	must(t, s.PutEpisode(ctx, e1))
	must(t, s.PutEpisode(ctx, e2))
	must(t, s.ArchiveEpisodes(ctx, tenant, []string{e1.ID, "unknown"}))
	must(t, s.ArchiveEpisodes(ctx, tenant, []string{e1.ID})) // twice: no-op
	hot, err := s.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant})
	must(t, err)
	if ids := episodeIDs(hot); !slices.Equal(ids, []string{e2.ID}) {
		t.Fatalf("hot episodes after archive = %v", ids)
	}
	cold, err := s.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, Statuses: []memory.EpisodeStatus{memory.EpisodeCold}})
	must(t, err)
	if len(cold) != 1 || cold[0].ID != e1.ID || cold[0].Status != memory.EpisodeCold || cold[0].Task != e1.Task {
		t.Fatalf("cold episodes = %+v", cold)
	}
	got, err := s.Episode(ctx, tenant, e1.ID)
	must(t, err)
	if got.Status != memory.EpisodeCold || len(got.Steps) != 2 {
		t.Fatalf("archived episode by ID = %+v", got)
	}
}

func mem(tenant, id string, version int, content string, at time.Time) memory.Memory {
	return memory.Memory{
		ID: id, Tenant: tenant, Version: version, Kind: memory.KindPreference, Content: content,
		CounterExample: "local time confused the finance team", TaskType: "report", Entities: []string{"utc"},
		ContentHash: memory.ContentHash(memory.KindPreference, content), Confidence: 0.5,
		Sources: []string{"ep_1"}, Evidence: []string{"ev_1"}, Status: memory.StatusLive,
		ValidFrom: base, Decay: 1, DecayAnchor: at, Flags: []string{memory.FlagUserStated},
		Reason: "inserted", DecisionID: "dec_1", CreatedAt: base, UpdatedAt: at,
	}
}

func testMemoryVersions(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	tenant := Tenant(t)
	v1 := mem(tenant, "m1", 1, "Reports use UTC", base)
	v2 := mem(tenant, "m1", 2, "Reports use UTC, with ISO 8601 timestamps", base.Add(time.Minute))
	v2.Sources = []string{"ep_1", "ep_2"}
	v2.Confidence = 0.75
	v2.SupersededBy = ""
	v2.ValidTo = base.Add(time.Hour)
	must(t, s.PutMemories(ctx, []memory.Memory{v1}))
	must(t, s.PutMemories(ctx, []memory.Memory{v2, v1})) // v1 again: idempotent
	cur, err := s.Memory(ctx, tenant, "m1")
	must(t, err)
	if !memoriesEqual(cur, v2) {
		t.Fatalf("current version:\n got %+v\nwant %+v", cur, v2)
	}
	hist, err := s.History(ctx, tenant, "m1")
	must(t, err)
	if len(hist) != 2 || hist[0].Version != 1 || hist[1].Version != 2 || !memoriesEqual(hist[0], v1) {
		t.Fatalf("history = %+v", hist)
	}
	if _, err := s.Memory(ctx, tenant, "nope"); !memory.IsNotFound(err) {
		t.Fatalf("unknown memory = %v, want ENOTFOUND", err)
	}
	if _, err := s.History(ctx, tenant, "nope"); !memory.IsNotFound(err) {
		t.Fatalf("unknown history = %v, want ENOTFOUND", err)
	}
	if _, err := s.Memory(ctx, tenant+"x", "m1"); !memory.IsNotFound(err) {
		t.Fatalf("memory of another tenant = %v, want ENOTFOUND", err)
	}
	bad := mem(tenant, "m2", 0, "x", base)
	if err := s.PutMemories(ctx, []memory.Memory{mem(tenant, "m3", 1, "ok", base), bad}); !memory.IsInvalid(err) {
		t.Fatalf("PutMemories with version 0 = %v, want EINVALID", err)
	}
	if _, err := s.Memory(ctx, tenant, "m3"); !memory.IsNotFound(err) {
		t.Fatalf("a rejected batch stored its valid rows: %v", err)
	}
}

func testMemoryFilters(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	tenant := Tenant(t)
	a := mem(tenant, "a", 1, "Reports use UTC", base)
	b := mem(tenant, "b", 1, "Detect CSV encoding first", base.Add(time.Minute))
	b.Kind = memory.KindLesson
	b.ContentHash = memory.ContentHash(b.Kind, b.Content)
	b.Sources = []string{"ep_2"}
	b.Scope = memory.UserScope("u-17")
	c := mem(tenant, "c", 1, "Old rule", base.Add(2*time.Minute))
	c2 := c
	c2.Version, c2.Status, c2.SupersededBy, c2.UpdatedAt = 2, memory.StatusSuperseded, "a", base.Add(3*time.Minute)
	must(t, s.PutMemories(ctx, []memory.Memory{a, b, c, c2}))

	check := func(name string, f memory.MemoryFilter, want ...string) {
		t.Helper()
		f.Tenant = tenant
		got, err := s.Memories(ctx, f)
		must(t, err)
		var ids []string
		for _, m := range got {
			ids = append(ids, m.ID)
		}
		if !slices.Equal(ids, want) {
			t.Fatalf("%s: Memories = %v, want %v", name, ids, want)
		}
	}
	check("all, by UpdatedAt", memory.MemoryFilter{}, "a", "b", "c")
	check("kind", memory.MemoryFilter{Kinds: []memory.Kind{memory.KindLesson}}, "b")
	check("status of current version", memory.MemoryFilter{Statuses: []memory.Status{memory.StatusLive}}, "a", "b")
	check("superseded", memory.MemoryFilter{Statuses: []memory.Status{memory.StatusSuperseded}}, "c")
	check("hash", memory.MemoryFilter{ContentHash: a.ContentHash}, "a")
	check("any of hashes", memory.MemoryFilter{ContentHashes: []string{b.ContentHash, "nope", a.ContentHash}}, "a", "b")
	check("source", memory.MemoryFilter{Source: "ep_2"}, "b")
	check("any of sources", memory.MemoryFilter{Sources: []string{"ep_9", "ep_2"}}, "b")
	check("none of sources", memory.MemoryFilter{Sources: []string{"ep_9"}})
	check("ids", memory.MemoryFilter{IDs: []string{"c", "a", "zz"}}, "a", "c")
	check("changed after", memory.MemoryFilter{UpdatedAfter: base.Add(time.Minute)}, "c")
	check("limit", memory.MemoryFilter{Limit: 2}, "a", "b")
	check("shared scope, old memories included", memory.MemoryFilter{Scopes: []memory.Scope{memory.SharedScope}}, "a", "c")
	check("a user's scope", memory.MemoryFilter{Scopes: []memory.Scope{memory.UserScope("u-17")}}, "b")
	check("another user's scope", memory.MemoryFilter{Scopes: []memory.Scope{memory.UserScope("u-18")}})
	if got, err := s.Memory(ctx, tenant, "b"); err != nil || got.Scope != memory.UserScope("u-17") {
		t.Fatalf("memory b has scope %q (%v), want user:u-17", got.Scope, err)
	}
	if got, _ := s.Memory(ctx, tenant, "a"); got.Scope != memory.SharedScope {
		t.Fatalf("a memory stored without a scope reads as %q, want shared", got.Scope)
	}
}

func testUsage(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	tenant := Tenant(t)
	must(t, s.PutMemories(ctx, []memory.Memory{mem(tenant, "m1", 1, "x", base)}))
	u1 := memory.Usage{Tenant: tenant, MemoryID: "m1", Kind: memory.UsageRecalled, At: base.Add(time.Hour)}
	u2 := memory.Usage{Tenant: tenant, MemoryID: "m1", Kind: memory.UsageRecalled, At: base.Add(2 * time.Hour)}
	must(t, s.RecordUsage(ctx, []memory.Usage{u1, u2}))
	must(t, s.RecordUsage(ctx, []memory.Usage{u2})) // retried: counted once
	m, err := s.Memory(ctx, tenant, "m1")
	must(t, err)
	if m.RecallCount != 2 || !m.LastRecalledAt.Equal(u2.At) {
		t.Fatalf("usage = count %d last %v, want 2 and %v", m.RecallCount, m.LastRecalledAt, u2.At)
	}
	// A new version keeps the usage of the memory.
	v2 := mem(tenant, "m1", 2, "y", base.Add(3*time.Hour))
	must(t, s.PutMemories(ctx, []memory.Memory{v2}))
	ms, err := s.Memories(ctx, memory.MemoryFilter{Tenant: tenant})
	must(t, err)
	if len(ms) != 1 || ms[0].RecallCount != 2 || ms[0].Version != 2 {
		t.Fatalf("Memories after a new version = %+v", ms)
	}
}

func testDecisions(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	tenant := Tenant(t)
	before := mem(tenant, "m1", 1, "Reports use UTC", base)
	after := before
	after.Version, after.Status, after.SupersededBy = 2, memory.StatusSuperseded, "m2"
	created := mem(tenant, "m2", 1, "Reports use Beijing time", base)
	d1 := memory.Decision{
		ID: "dec_1", Tenant: tenant, Action: memory.ActionMerge, WorkflowID: "wf1", EpisodeID: "ep_2",
		Candidate: memory.Candidate{Kind: memory.KindPreference, Content: "报表用北京时间"},
		Neighbors: []memory.ScoredCandidate{{ID: "m1", Content: before.Content, Similarity: 0.91}},
		Verdict:   memory.VerdictConflicts, TargetID: "m1", Reason: "same subject, different zone",
		Judge: "offline", Model: "rules", PromptVersion: "v1",
		Before: []memory.Memory{before}, After: []memory.Memory{after, created}, CreatedAt: base,
	}
	d2 := memory.Decision{ID: "dec_2", Tenant: tenant, Action: memory.ActionUndo, Undoes: "dec_1", Reason: "undo", CreatedAt: base.Add(time.Minute), TargetID: "m9"}
	must(t, s.LogDecision(ctx, d1))
	must(t, s.LogDecision(ctx, d1)) // idempotent
	must(t, s.LogDecision(ctx, d2))
	got, err := s.Decision(ctx, tenant, "dec_1")
	must(t, err)
	if got.Verdict != d1.Verdict || got.Reason != d1.Reason || len(got.Before) != 1 || len(got.After) != 2 ||
		got.After[1].Content != created.Content || got.Candidate.Content != d1.Candidate.Content ||
		len(got.Neighbors) != 1 || got.Neighbors[0].Similarity != 0.91 || !got.CreatedAt.Equal(base) {
		t.Fatalf("decision round trip = %+v", got)
	}
	all, err := s.Decisions(ctx, memory.DecisionFilter{Tenant: tenant})
	must(t, err)
	if len(all) != 2 || all[0].ID != "dec_1" || all[1].ID != "dec_2" {
		t.Fatalf("Decisions = %v", decisionIDs(all))
	}
	byMem, err := s.Decisions(ctx, memory.DecisionFilter{Tenant: tenant, MemoryID: "m2"})
	must(t, err)
	if ids := decisionIDs(byMem); !slices.Equal(ids, []string{"dec_1"}) {
		t.Fatalf("Decisions by memory = %v", ids)
	}
	byWF, err := s.Decisions(ctx, memory.DecisionFilter{Tenant: tenant, WorkflowID: "wf1"})
	must(t, err)
	if ids := decisionIDs(byWF); !slices.Equal(ids, []string{"dec_1"}) {
		t.Fatalf("Decisions by workflow = %v", ids)
	}
	byIDs, err := s.Decisions(ctx, memory.DecisionFilter{Tenant: tenant, IDs: []string{"dec_2", "dec_none"}})
	must(t, err)
	if ids := decisionIDs(byIDs); !slices.Equal(ids, []string{"dec_2"}) {
		t.Fatalf("Decisions by ID = %v", ids)
	}
	feed, err := s.Decisions(ctx, memory.DecisionFilter{Tenant: tenant, Newest: true, Limit: 1})
	must(t, err)
	next, err := s.Decisions(ctx, memory.DecisionFilter{Tenant: tenant, Newest: true, Before: feed[0].CreatedAt, Limit: 1})
	must(t, err)
	if a, b := decisionIDs(feed), decisionIDs(next); !slices.Equal(a, []string{"dec_2"}) || !slices.Equal(b, []string{"dec_1"}) {
		t.Fatalf("newest-first pages = %v then %v", a, b)
	}
	if _, err := s.Decision(ctx, tenant, "nope"); !memory.IsNotFound(err) {
		t.Fatalf("unknown decision = %v, want ENOTFOUND", err)
	}
	// A batch of decisions is logged in one write, in order; one already
	// logged keeps its first write.
	if ap, ok := s.(interface {
		AppendDecisions(context.Context, []memory.Decision) error
	}); ok {
		d3 := memory.Decision{ID: "dec_3", Tenant: tenant, Action: memory.ActionStore, Reason: "third", CreatedAt: base.Add(2 * time.Minute), TargetID: "m3"}
		d4 := d3
		d4.ID, d4.Reason = "dec_4", "fourth"
		again := d1
		again.Reason = "rewritten"
		must(t, ap.AppendDecisions(ctx, []memory.Decision{d3, d4, again}))
		got, err := s.Decision(ctx, tenant, "dec_1")
		must(t, err)
		all, err := s.Decisions(ctx, memory.DecisionFilter{Tenant: tenant})
		must(t, err)
		if ids := decisionIDs(all); got.Reason != d1.Reason || !slices.Equal(ids, []string{"dec_1", "dec_2", "dec_3", "dec_4"}) {
			t.Fatalf("after AppendDecisions: decisions %v, dec_1's reason %q", ids, got.Reason)
		}
	}
	if f, ok := s.(interface {
		LoggedDecisionIDs(context.Context, string, []string) ([]string, error)
	}); ok {
		ids, err := f.LoggedDecisionIDs(ctx, tenant, []string{"dec_none", "dec_2", "dec_1"})
		must(t, err)
		slices.Sort(ids)
		if !slices.Equal(ids, []string{"dec_1", "dec_2"}) {
			t.Fatalf("LoggedDecisionIDs = %v, want dec_1 and dec_2", ids)
		}
		if ids, err := f.LoggedDecisionIDs(ctx, "other-"+tenant, []string{"dec_1"}); err != nil || len(ids) != 0 {
			t.Fatalf("another tenant's LoggedDecisionIDs = %v, %v; want none", ids, err)
		}
	}
}

func testPurge(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	tenant, other := Tenant(t), Tenant(t)+"o"
	must(t, s.AppendEvents(ctx, events(tenant, "s1", 3)))
	must(t, s.AppendEvents(ctx, events(tenant, "s2", 2)))
	must(t, s.AppendEvents(ctx, events(other, "s1", 2)))
	e1 := episode(tenant, "s1", base, "x")
	e2 := episode(tenant, "s2", base, "x")
	must(t, s.PutEpisode(ctx, e1))
	must(t, s.PutEpisode(ctx, e2))
	must(t, s.PutEpisode(ctx, episode(other, "s1", base, "x")))
	must(t, s.PutMemories(ctx, []memory.Memory{mem(tenant, "m1", 1, "a", base), mem(tenant, "m1", 2, "b", base), mem(tenant, "m2", 1, "c", base), mem(other, "m1", 1, "a", base)}))
	must(t, s.LogDecision(ctx, memory.Decision{ID: "d1", Tenant: tenant, Action: memory.ActionStore, After: []memory.Memory{mem(tenant, "m1", 1, "a", base)}, CreatedAt: base}))
	must(t, s.LogDecision(ctx, memory.Decision{ID: "d2", Tenant: tenant, Action: memory.ActionStore, After: []memory.Memory{mem(tenant, "m2", 1, "c", base)}, CreatedAt: base}))

	n, err := s.Purge(ctx, memory.PurgeRequest{Tenant: tenant, SessionIDs: []string{"s1"}, EpisodeIDs: []string{e1.ID}, MemoryIDs: []string{"m1"}})
	must(t, err)
	want := memory.PurgeCounts{Events: 3, Episodes: 1, Memories: 1, Versions: 2, Decisions: 1}
	if n != want {
		t.Fatalf("Purge counts = %+v, want %+v", n, want)
	}
	if evs, _ := s.SessionEvents(ctx, tenant, "s1"); len(evs) != 0 {
		t.Fatalf("purged session still has %d events", len(evs))
	}
	if evs, _ := s.SessionEvents(ctx, tenant, "s2"); len(evs) != 2 {
		t.Fatalf("other session lost events: %d", len(evs))
	}
	if _, err := s.Episode(ctx, tenant, e1.ID); !memory.IsNotFound(err) {
		t.Fatalf("purged episode = %v", err)
	}
	if _, err := s.History(ctx, tenant, "m1"); !memory.IsNotFound(err) {
		t.Fatalf("purged memory history = %v", err)
	}
	if _, err := s.Decision(ctx, tenant, "d1"); !memory.IsNotFound(err) {
		t.Fatalf("decision mentioning a purged memory survived: %v", err)
	}
	if _, err := s.Memory(ctx, other, "m1"); err != nil {
		t.Fatalf("purge crossed tenants: %v", err)
	}
	again, err := s.Purge(ctx, memory.PurgeRequest{Tenant: tenant, SessionIDs: []string{"s1"}, MemoryIDs: []string{"m1"}})
	must(t, err)
	if again != (memory.PurgeCounts{}) {
		t.Fatalf("second purge = %+v, want zero counts", again)
	}
	all, err := s.Purge(ctx, memory.PurgeRequest{Tenant: tenant, All: true})
	must(t, err)
	if all.Events != 2 || all.Episodes != 1 || all.Memories != 1 || all.Decisions != 1 {
		t.Fatalf("purge all = %+v", all)
	}
	tenants, err := s.Tenants(ctx)
	must(t, err)
	if slices.Contains(tenants, tenant) || !slices.Contains(tenants, other) {
		t.Fatalf("Tenants after purge = %v", tenants)
	}
}

func testUnicode(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	tenant := Tenant(t)
	text := "以后所有报表都用 UTC 时间，不要用本地时间。\n\n'quotes' \"double\" \\ back\tslash 🙂"
	e := events(tenant, "中文会话", 1)
	e[0].Content = text
	must(t, s.AppendEvents(ctx, e))
	got, err := s.SessionEvents(ctx, tenant, "中文会话")
	must(t, err)
	if len(got) != 1 || got[0].Content != text {
		t.Fatalf("unicode event round trip = %+v", got)
	}
	m := mem(tenant, "m1", 1, text, base)
	m.Entities = []string{"报表", "UTC"}
	must(t, s.PutMemories(ctx, []memory.Memory{m}))
	gm, err := s.Memory(ctx, tenant, "m1")
	must(t, err)
	if gm.Content != text || !slices.Equal(gm.Entities, m.Entities) {
		t.Fatalf("unicode memory round trip = %q %v", gm.Content, gm.Entities)
	}
}

func testEventsFirstWrite(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	tenant := Tenant(t)
	evs := events(tenant, "s1", 2)
	must(t, s.AppendEvents(ctx, evs[:1]))
	changed := evs[0]
	changed.Content, changed.TS = "rewritten", base.Add(time.Hour)
	must(t, s.AppendEvents(ctx, []memory.Event{changed, evs[1], evs[1]}))
	got, err := s.SessionEvents(ctx, tenant, "s1")
	must(t, err)
	if len(got) != 2 || got[0].Content != evs[0].Content || !got[0].TS.Equal(evs[0].TS) || got[1].ID != evs[1].ID {
		t.Fatalf("events after rewriting a stored ID = %+v, want the first write kept", got)
	}
}

func testEpisodeRewrite(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	tenant := Tenant(t)
	e := episode(tenant, "s1", base, "x")
	must(t, s.PutEpisode(ctx, e))
	e.EndedAt = base.Add(72 * time.Hour) // another month's partition, another sort key
	e.Task = "re-distilled"
	must(t, s.PutEpisode(ctx, e))
	all, err := s.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant})
	must(t, err)
	if len(all) != 1 || all[0].Task != "re-distilled" || !all[0].EndedAt.Equal(e.EndedAt) {
		t.Fatalf("episodes after a rewrite that moved EndedAt = %+v", all)
	}
	old, err := s.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, Until: base.Add(time.Hour)})
	must(t, err)
	if len(old) != 0 {
		t.Fatalf("the old EndedAt still matches: %+v", old)
	}
}

func testEpisodeCold(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	tenant := Tenant(t)
	e := episode(tenant, "s1", base, "x")
	e.Status = memory.EpisodeCold
	must(t, s.PutEpisode(ctx, e))
	hot, err := s.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant})
	must(t, err)
	cold, err := s.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, Statuses: []memory.EpisodeStatus{memory.EpisodeCold}, TaskType: "x"})
	must(t, err)
	if len(hot) != 0 || len(cold) != 1 || cold[0].Status != memory.EpisodeCold {
		t.Fatalf("an episode put as cold: hot %v, cold %v", episodeIDs(hot), episodeIDs(cold))
	}
	e.Status = memory.EpisodeLive
	must(t, s.PutEpisode(ctx, e))
	both, err := s.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, Statuses: []memory.EpisodeStatus{memory.EpisodeLive, memory.EpisodeCold}})
	must(t, err)
	if len(both) != 1 || both[0].Status != memory.EpisodeLive {
		t.Fatalf("an episode put back as live = %+v", both)
	}
	got, err := s.Episode(ctx, tenant, e.ID)
	must(t, err)
	if got.Status != memory.EpisodeLive {
		t.Fatalf("Episode after it was put back live: status %s", got.Status)
	}
}

func testMemoryStatusAcrossWrites(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	tenant := Tenant(t)
	v1 := mem(tenant, "m1", 1, "Old rule", base)
	must(t, s.PutMemories(ctx, []memory.Memory{v1}))
	v2 := v1
	v2.Version, v2.Status, v2.UpdatedAt = 2, memory.StatusSuperseded, base.Add(time.Minute)
	must(t, s.PutMemories(ctx, []memory.Memory{v2}))
	live, err := s.Memories(ctx, memory.MemoryFilter{Tenant: tenant, Statuses: []memory.Status{memory.StatusLive}})
	must(t, err)
	if len(live) != 0 {
		t.Fatalf("a memory whose current version is superseded matched status live: %+v", live)
	}
	sup, err := s.Memories(ctx, memory.MemoryFilter{Tenant: tenant, Statuses: []memory.Status{memory.StatusSuperseded}})
	must(t, err)
	if len(sup) != 1 || sup[0].Version != 2 {
		t.Fatalf("superseded memories = %+v", sup)
	}
	// An older version written late does not become current.
	must(t, s.PutMemories(ctx, []memory.Memory{v1}))
	cur, err := s.Memory(ctx, tenant, "m1")
	must(t, err)
	if cur.Version != 2 {
		t.Fatalf("current version after rewriting v1 = %d, want 2", cur.Version)
	}
}

func testDecisionFirstWrite(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	tenant := Tenant(t)
	d := memory.Decision{ID: "d1", Tenant: tenant, Action: memory.ActionStore, Reason: "first", CreatedAt: base}
	must(t, s.LogDecision(ctx, d))
	d.Reason, d.CreatedAt = "second", base.Add(time.Hour)
	must(t, s.LogDecision(ctx, d))
	got, err := s.Decision(ctx, tenant, "d1")
	must(t, err)
	all, err := s.Decisions(ctx, memory.DecisionFilter{Tenant: tenant})
	must(t, err)
	if got.Reason != "first" || !got.CreatedAt.Equal(base) || len(all) != 1 {
		t.Fatalf("decision after a second write = %+v (%d listed), want the first", got, len(all))
	}
	if err := s.LogDecision(ctx, memory.Decision{ID: "d2", Tenant: tenant}); !memory.IsInvalid(err) {
		t.Fatalf("LogDecision without an action = %v, want EINVALID", err)
	}
}

func testTenants(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	withMemory, withCold, withEvents := Tenant(t)+"m", Tenant(t)+"c", Tenant(t)+"e"
	must(t, s.PutMemories(ctx, []memory.Memory{mem(withMemory, "m1", 1, "x", base)}))
	e := episode(withCold, "s1", base, "x")
	must(t, s.PutEpisode(ctx, e))
	must(t, s.ArchiveEpisodes(ctx, withCold, []string{e.ID}))
	must(t, s.AppendEvents(ctx, events(withEvents, "s1", 1)))
	tenants, err := s.Tenants(ctx)
	must(t, err)
	if !slices.Contains(tenants, withMemory) || !slices.Contains(tenants, withCold) || slices.Contains(tenants, withEvents) {
		t.Fatalf("Tenants = %v: want %s and %s (memory, archived episode) and not %s (events only)", tenants, withMemory, withCold, withEvents)
	}
	if !slices.IsSorted(tenants) {
		t.Fatalf("Tenants not sorted: %v", tenants)
	}
}

func testMemoriesByID(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	tenant := Tenant(t)
	var ms []memory.Memory
	for i, id := range []string{"m3", "m1", "m5", "m2", "m4"} {
		ms = append(ms, mem(tenant, id, 1, "memory "+id, base.Add(time.Duration(-i)*time.Hour)))
	}
	must(t, s.PutMemories(ctx, ms))
	var seen []string
	after := ""
	for range 4 {
		page, err := s.Memories(ctx, memory.MemoryFilter{Tenant: tenant, ByID: true, IDAfter: after, Limit: 2})
		must(t, err)
		if len(page) == 0 {
			break
		}
		for _, m := range page {
			seen = append(seen, m.ID)
		}
		after = page[len(page)-1].ID
	}
	if want := []string{"m1", "m2", "m3", "m4", "m5"}; !slices.Equal(seen, want) {
		t.Fatalf("pages by ID = %v, want %v", seen, want)
	}
	// Newest first, in pages: m3 is the newest, m4 the oldest; m6 ties
	// with m1 on the time and comes first by ID.
	tie := mem(tenant, "m6", 1, "memory m6", ms[1].UpdatedAt)
	must(t, s.PutMemories(ctx, []memory.Memory{tie}))
	seen = nil
	f := memory.MemoryFilter{Tenant: tenant, Newest: true, Limit: 2}
	for range 5 {
		page, err := s.Memories(ctx, f)
		must(t, err)
		if len(page) == 0 {
			break
		}
		for _, m := range page {
			seen = append(seen, m.ID)
		}
		f.Before, f.BeforeID = page[len(page)-1].UpdatedAt, page[len(page)-1].ID
	}
	if want := []string{"m3", "m6", "m1", "m5", "m2", "m4"}; !slices.Equal(seen, want) {
		t.Fatalf("newest-first pages = %v, want %v", seen, want)
	}
}

func testSettings(t *testing.T, s memory.EpisodicStore) {
	ctx := context.Background()
	key := "test." + Tenant(t)
	if v, err := s.Setting(ctx, key); err != nil || v != "" {
		t.Fatalf("unset setting = %q, %v", v, err)
	}
	must(t, s.PutSetting(ctx, key, `{"generation":"a"}`))
	must(t, s.PutSetting(ctx, key, `{"generation":"b"}`))
	if v, err := s.Setting(ctx, key); err != nil || v != `{"generation":"b"}` {
		t.Fatalf("setting after two writes = %q, %v, want the latest", v, err)
	}
	if err := s.PutSetting(ctx, "bad key", "x"); !memory.IsInvalid(err) {
		t.Fatalf("PutSetting with a bad key = %v, want EINVALID", err)
	}
	must(t, s.PutSetting(ctx, key+".one", "1"))
	must(t, s.PutSetting(ctx, key+".two", "2"))
	must(t, s.PutSetting(ctx, key+".two", "2b"))
	got, err := s.Settings(ctx, key+".")
	must(t, err)
	if len(got) != 2 || got[key+".one"] != "1" || got[key+".two"] != "2b" {
		t.Fatalf("Settings(%q) = %v, want the two under the prefix, the latest of each", key+".", got)
	}
	// Deleting removes every write of a key, and only that key.
	must(t, s.DeleteSetting(ctx, key+".two"))
	must(t, s.DeleteSetting(ctx, key+".never-set"))
	if got, err := s.Settings(ctx, key+"."); err != nil || len(got) != 1 || got[key+".one"] != "1" {
		t.Fatalf("Settings(%q) after deleting .two = %v, %v, want .one alone", key+".", got, err)
	}
	if v, err := s.Setting(ctx, key+".two"); err != nil || v != "" {
		t.Fatalf("a deleted setting = %q, %v, want unset", v, err)
	}
	if err := s.DeleteSetting(ctx, "bad key"); !memory.IsInvalid(err) {
		t.Fatalf("DeleteSetting with a bad key = %v, want EINVALID", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func episodeIDs(eps []memory.Episode) []string {
	var out []string
	for _, e := range eps {
		out = append(out, e.ID)
	}
	return out
}

func decisionIDs(ds []memory.Decision) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

func episodesEqual(a, b memory.Episode) bool {
	return a.ID == b.ID && a.Tenant == b.Tenant && a.SessionID == b.SessionID && a.UserID == b.UserID &&
		a.Agent == b.Agent && a.Task == b.Task && a.TaskType == b.TaskType && slices.Equal(a.Entities, b.Entities) &&
		slices.Equal(a.Steps, b.Steps) && slices.Equal(a.Failures, b.Failures) && a.Outcome == b.Outcome &&
		slices.Equal(a.Feedback, b.Feedback) && a.StartedAt.Equal(b.StartedAt) && a.EndedAt.Equal(b.EndedAt) &&
		a.EventCount == b.EventCount && a.Status == b.Status && slices.Equal(a.SourceEpisodes, b.SourceEpisodes) &&
		a.Extractor == b.Extractor && a.Project == b.Project && a.ProjectName == b.ProjectName && a.CreatedAt.Equal(b.CreatedAt)
}

func memoriesEqual(a, b memory.Memory) bool {
	return a.ID == b.ID && a.Tenant == b.Tenant && a.Version == b.Version && a.Kind == b.Kind &&
		a.Content == b.Content && a.CounterExample == b.CounterExample && a.TaskType == b.TaskType &&
		slices.Equal(a.Entities, b.Entities) && a.ContentHash == b.ContentHash && a.Confidence == b.Confidence &&
		slices.Equal(a.Sources, b.Sources) && slices.Equal(a.Evidence, b.Evidence) && a.Status == b.Status &&
		a.SupersededBy == b.SupersededBy && slices.Equal(a.Supersedes, b.Supersedes) && a.ValidFrom.Equal(b.ValidFrom) &&
		a.ValidTo.Equal(b.ValidTo) && a.Decay == b.Decay && a.DecayAnchor.Equal(b.DecayAnchor) && a.Pinned == b.Pinned &&
		slices.Equal(a.Flags, b.Flags) && a.Helped == b.Helped && a.Hurt == b.Hurt && a.Reason == b.Reason &&
		a.DecisionID == b.DecisionID && a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt)
}
