//go:build linux && amd64

package chdb

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/store/clickhouse"
)

func cacheMemory(id string, version int, content string, at time.Time) memory.Memory {
	m := memory.Memory{ID: id, Tenant: "t1", Version: version, Kind: memory.KindFact, Content: content,
		Status: memory.StatusLive, Confidence: 0.6, Sources: []string{"ep-1"}, ValidFrom: at, DecayAnchor: at,
		Decay: 1, CreatedAt: at, UpdatedAt: at.Add(time.Duration(version) * time.Second)}
	m.ContentHash = memory.ContentHash(m.Kind, m.Content)
	return m
}

// postSQL runs a statement over the engine's HTTP interface at url, as
// another process would.
func postSQL(t *testing.T, url, sql string) {
	t.Helper()
	resp, err := http.Post(url+"/", "text/plain", strings.NewReader(sql))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s over HTTP: %s", sql, resp.Status)
	}
}

// TestMemoryCacheAnswersWhatTheStoreWould reads memories by ID and by
// content hash through the cache after every kind of write, and checks
// each answer against the store's own (a read the cache does not serve),
// and that reads of what the cache holds run no statement.
func TestMemoryCacheAnswersWhatTheStoreWould(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	defer s.Close()
	at := time.Date(2026, 3, 1, 9, 30, 0, 123456789, time.FixedZone("CET", 3600))
	m1, m2 := cacheMemory("m1", 1, "The nightly build runs at 02:00 UTC.", at), cacheMemory("m2", 1, "Deploys go out on Tuesdays.", at)
	if err := s.PutMemories(ctx, []memory.Memory{m1, m2}); err != nil {
		t.Fatal(err)
	}
	// same reads f through the cache and from the store (a Limit is not
	// served by the cache), and compares; it returns the statements the
	// cached read ran.
	same := func(what string, f memory.MemoryFilter) uint64 {
		t.Helper()
		before := s.eng.statements.Load()
		got, err := s.Memories(ctx, f)
		ran := s.eng.statements.Load() - before
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		f.Limit = 1000
		want, err := s.Memories(ctx, f)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the cache answered\n%+v\nthe store\n%+v", what, got, want)
		}
		return ran
	}
	byID := memory.MemoryFilter{Tenant: "t1", IDs: []string{"m1", "m2", "m9"}}
	byHash := func(ms ...memory.Memory) memory.MemoryFilter {
		f := memory.MemoryFilter{Tenant: "t1", Statuses: []memory.Status{memory.StatusLive, memory.StatusCold}}
		for _, m := range ms {
			f.ContentHashes = append(f.ContentHashes, m.ContentHash)
		}
		return f
	}
	if ran := same("first read by ID", byID); ran == 0 {
		t.Fatal("the first read by ID ran no statement: it cannot have read the store")
	}
	same("first read by hash", byHash(m1, m2))
	for what, f := range map[string]memory.MemoryFilter{"by ID": byID, "by hash": byHash(m1, m2), "without usage": {Tenant: "t1", IDs: []string{"m2"}, NoUsage: true}} {
		if ran := same("again "+what, f); ran != 0 {
			t.Errorf("reading again %s ran %d statements; the cache holds the answer", what, ran)
		}
	}

	// A new version with new text, and a new memory, written here: both
	// are answered from the cache, as the store answers.
	m1v2 := cacheMemory("m1", 2, "The nightly build runs at 03:00 UTC.", at)
	m3 := cacheMemory("m3", 1, "Staging is reset every Monday.", at)
	if err := s.PutMemories(ctx, []memory.Memory{m1v2, m3}); err != nil {
		t.Fatal(err)
	}
	for what, f := range map[string]memory.MemoryFilter{"the new version by ID": byID, "its old text": byHash(m1), "its new text": byHash(m1v2), "a new memory": byHash(m3)} {
		if ran := same(what, f); ran != 0 {
			t.Errorf("reading %s after writing it ran %d statements", what, ran)
		}
	}
	// An older version written again does not replace the current one.
	if err := s.PutMemories(ctx, []memory.Memory{m1}); err != nil {
		t.Fatal(err)
	}
	same("after an older version", byID)
	same("after an older version, by hash", byHash(m1, m1v2))

	// Usage recorded shows in the next read.
	if err := s.RecordUsage(ctx, []memory.Usage{{Tenant: "t1", MemoryID: "m2", Kind: memory.UsageRecalled, At: at}}); err != nil {
		t.Fatal(err)
	}
	if ran := same("after usage", byID); ran != 1 {
		t.Errorf("reading after usage of one memory ran %d statements, want 1 (its usage)", ran)
	}
	if got, _ := s.Memories(ctx, memory.MemoryFilter{Tenant: "t1", IDs: []string{"m2"}}); len(got) != 1 || got[0].RecallCount != 1 {
		t.Fatalf("after one recall: %+v", got)
	}

	// Writes the cache did not see: another handle on the engine, and a
	// statement served to another process.
	other := openTest(t, dir)
	defer other.Close()
	m2v2 := cacheMemory("m2", 2, "Deploys go out on Wednesdays.", at)
	if err := other.PutMemories(ctx, []memory.Memory{m2v2}); err != nil {
		t.Fatal(err)
	}
	same("after another handle wrote", byID)
	same("after another handle wrote, by hash", byHash(m2, m2v2))
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	m4 := cacheMemory("m4", 1, "Backups are kept for 30 days.", at)
	insert := fmt.Sprintf("INSERT INTO memory_versions (tenant, id, version, kind, content, content_hash, status, write_seq) VALUES ('t1', 'm4', 1, 'fact', '%s', '%s', 'live', 1)", m4.Content, m4.ContentHash)
	postSQL(t, srv.URL, insert)
	if got := same("after a statement over HTTP", byHash(m4)); got == 0 {
		t.Error("a read after a statement over HTTP ran no statement")
	}
	if got, _ := s.Memories(ctx, byHash(m4)); len(got) != 1 {
		t.Fatalf("the memory inserted over HTTP: %+v", got)
	}

	// A purge.
	if _, err := s.Purge(ctx, memory.PurgeRequest{Tenant: "t1", MemoryIDs: []string{"m1"}}); err != nil {
		t.Fatal(err)
	}
	same("after a purge", byID)
	if got, _ := s.Memories(ctx, byID); len(got) != 1 || got[0].ID != "m2" {
		t.Fatalf("after purging m1: %+v", got)
	}

	// What a caller changes in an answer does not change the cache's.
	got, _ := s.Memories(ctx, memory.MemoryFilter{Tenant: "t1", IDs: []string{"m2"}})
	got[0].Sources[0] = "changed"
	same("after a caller changed an answer", byID)
}

// TestMemoryCacheKeepsNoVersionItCannotPlace writes a version older than
// the store's current one through a handle that knows the memory's content
// hash but not its version: the cache must not take the older version for
// the current one.
func TestMemoryCacheKeepsNoVersionItCannotPlace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	defer s.Close()
	at := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	v1, v3 := cacheMemory("m1", 1, "Logs rotate daily.", at), cacheMemory("m1", 3, "Logs rotate hourly.", at)
	if err := s.PutMemories(ctx, []memory.Memory{v3}); err != nil {
		t.Fatal(err)
	}
	fresh := openTest(t, dir) // its cache knows nothing yet
	defer fresh.Close()
	if _, err := fresh.Memories(ctx, memory.MemoryFilter{Tenant: "t1", ContentHash: "none"}); err != nil {
		t.Fatal(err) // loads the tenant's content hashes, not m1's row
	}
	if err := fresh.PutMemories(ctx, []memory.Memory{v1}); err != nil {
		t.Fatal(err)
	}
	got, err := fresh.Memories(ctx, memory.MemoryFilter{Tenant: "t1", IDs: []string{"m1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Version != 3 {
		t.Fatalf("after writing version 1 over version 3: %+v, want version 3", got)
	}
	if got, _ := fresh.Memories(ctx, memory.MemoryFilter{Tenant: "t1", ContentHash: v1.ContentHash}); len(got) != 0 {
		t.Fatalf("version 1's text finds %+v; the current version has other text", got)
	}
}

// TestMemoryCacheHoldsWhatTheStoreReturns writes memories whose fields a
// round trip through the store changes (times to the millisecond in UTC,
// empty lists, an unnormalised scope, negative counts) where the cache
// keeps them, and compares its answer with the store's.
func TestMemoryCacheHoldsWhatTheStoreReturns(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	defer s.Close()
	at := time.Date(2031, 7, 9, 23, 59, 59, 999_999_999, time.FixedZone("PDT", -7*3600))
	a := cacheMemory("a", 4, "Reports use ISO 8601 dates.", at)
	a.Entities, a.Evidence, a.Supersedes, a.Flags = []string{}, []string{}, []string{}, []string{}
	a.Helped, a.Hurt, a.ValidTo, a.Pinned = -2, 3, at.Add(time.Nanosecond), true
	b := cacheMemory("b", 1, "Ask before deleting branches.", time.Unix(0, 1_500_000).In(time.FixedZone("X", 5*3600)))
	b.Scope, b.Entities, b.Reason = "", []string{"git"}, "inserted"
	ids := memory.MemoryFilter{Tenant: "t1", IDs: []string{"a", "b"}, NoUsage: true}
	if _, err := s.Memories(ctx, ids); err != nil { // both known absent
		t.Fatal(err)
	}
	if err := s.PutMemories(ctx, []memory.Memory{a, b}); err != nil {
		t.Fatal(err)
	}
	before := s.eng.statements.Load()
	got, err := s.Memories(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	if ran := s.eng.statements.Load() - before; ran != 0 {
		t.Fatalf("the read ran %d statements; the cache holds both", ran)
	}
	ids.Limit = 10
	want, err := s.Memories(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the cache holds\n%+v\nthe store returns\n%+v", got, want)
	}
}

// TestLoggedDecisionsAreKnown asks which decisions are logged after
// decisions were logged here, by another handle and over HTTP, and after a
// purge, and checks each answer against the store's.
func TestLoggedDecisionsAreKnown(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	defer s.Close()
	at := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	decision := func(id, memoryID string) memory.Decision {
		m := cacheMemory(memoryID, 1, "Fact "+memoryID+".", at)
		return memory.Decision{ID: id, Tenant: "t1", Action: memory.ActionStore, CreatedAt: at,
			Candidate: memory.Candidate{Kind: m.Kind, Content: m.Content}, After: []memory.Memory{m}}
	}
	ids := []string{"d1", "d2", "d3", "d4", "d5"}
	// logged asks through the cache and of the store (a fresh handle's
	// first answer is the store's), and returns the statements the first
	// ran.
	logged := func(what string, want ...string) uint64 {
		t.Helper()
		before := s.eng.statements.Load()
		got, err := s.LoggedDecisionIDs(ctx, "t1", ids)
		ran := s.eng.statements.Load() - before
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: logged %v, want %v", what, got, want)
		}
		return ran
	}
	if err := s.AppendDecisions(ctx, []memory.Decision{decision("d1", "m1")}); err != nil {
		t.Fatal(err)
	}
	logged("first", "d1")
	if err := s.AppendDecisions(ctx, []memory.Decision{decision("d2", "m2")}); err != nil {
		t.Fatal(err)
	}
	if err := s.LogDecision(ctx, decision("d3", "m3")); err != nil {
		t.Fatal(err)
	}
	if ran := logged("after logging here", "d1", "d2", "d3"); ran != 0 {
		t.Errorf("asking after logging here ran %d statements", ran)
	}
	other := openTest(t, dir)
	defer other.Close()
	if err := other.AppendDecisions(ctx, []memory.Decision{decision("d4", "m4")}); err != nil {
		t.Fatal(err)
	}
	logged("after another handle logged", "d1", "d2", "d3", "d4")
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	postSQL(t, srv.URL, "INSERT INTO merge_decisions (tenant, id, action) VALUES ('t1', 'd5', 'store')")
	logged("after a statement over HTTP", "d1", "d2", "d3", "d4", "d5")
	if _, err := s.Purge(ctx, memory.PurgeRequest{Tenant: "t1", MemoryIDs: []string{"m1"}}); err != nil {
		t.Fatal(err)
	}
	logged("after a purge", "d2", "d3", "d4", "d5")
	// Logging one already logged writes nothing again.
	if err := s.LogDecision(ctx, decision("d2", "m2")); err != nil {
		t.Fatal(err)
	}
	var n strings.Builder
	if err := s.QueryReadOnly(ctx, "SELECT count() FROM merge_decisions WHERE id = 'd2'", &n, clickhouse.QueryOptions{Format: clickhouse.FormatTSV}); err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(n.String()); f[len(f)-1] != "1" {
		t.Fatalf("d2 is logged %q times, want once", n.String())
	}
}
