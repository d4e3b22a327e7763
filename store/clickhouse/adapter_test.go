package clickhouse_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/memory/storetest"
	chschema "github.com/hindsight-memory/hindsight/schema/clickhouse"
	"github.com/hindsight-memory/hindsight/store/clickhouse"
	"github.com/hindsight-memory/hindsight/store/clickhouse/chdb"
)

var at = time.Date(2026, 3, 2, 9, 30, 15, 123_000_000, time.UTC)

func mustT(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func sqlText(t testing.TB, s *chdb.Store, query string, format string) string {
	t.Helper()
	var b bytes.Buffer
	mustT(t, s.QueryReadOnly(context.Background(), query, &b, clickhouse.QueryOptions{Format: format}))
	return b.String()
}

func TestMigrationsAreRecordedAndIdempotent(t *testing.T) {
	ctx := context.Background()
	s := openChDB(t, "")
	want, err := chschema.Migrations()
	mustT(t, err)
	mustT(t, s.Migrate(ctx))
	mustT(t, s.Migrate(ctx))
	applied, err := s.AppliedMigrations(ctx)
	mustT(t, err)
	if len(applied) != len(want) {
		t.Fatalf("recorded %d migrations, want %d", len(applied), len(want))
	}
	for _, m := range want {
		if applied[m.Version] != m.Checksum {
			t.Fatalf("migration %d recorded with checksum %q, want %q", m.Version, applied[m.Version], m.Checksum)
		}
	}
	if got := sqlText(t, s, "SELECT count() FROM schema_migrations FINAL", clickhouse.FormatTSV); got != fmt.Sprintf("count()\n%d\n", len(want)) {
		t.Fatalf("schema_migrations after three runs holds %q", got)
	}
	// An applied migration whose file changed is refused.
	mustT(t, s.Exec(ctx, "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (1, 'events', 'edited', now64(3) + 1)"))
	if err := s.Migrate(ctx); err == nil || !strings.Contains(err.Error(), "changed after it was applied") {
		t.Fatalf("Migrate with an edited migration = %v", err)
	}
}

// Data written through the embedded engine survives closing it and opening
// the directory again.
func TestRestartKeepsData(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func(dir string) *chdb.Store {
		s, err := chdb.Open(ctx, chdb.Config{DataDir: dir, LibPath: libPath(t)})
		mustT(t, err)
		return s
	}
	s := open(dir)
	tenant := storetest.Tenant(t)
	ev := memory.Event{ID: memory.EventID(tenant, "s1", 0), Tenant: tenant, SessionID: "s1", Role: memory.RoleUser, Content: "hello\n\nworld", TS: at}
	mustT(t, s.AppendEvents(ctx, []memory.Event{ev}))
	ep := memory.Episode{ID: memory.EpisodeID(tenant, "s1"), Tenant: tenant, SessionID: "s1", Task: "t", Status: memory.EpisodeLive, EndedAt: at}
	mustT(t, s.PutEpisode(ctx, ep))
	m := memory.Memory{ID: "m1", Tenant: tenant, Version: 1, Kind: memory.KindFact, Status: memory.StatusLive, Content: "c", UpdatedAt: at}
	mustT(t, s.PutMemories(ctx, []memory.Memory{m}))
	mustT(t, s.LogDecision(ctx, memory.Decision{ID: "d1", Tenant: tenant, Action: memory.ActionStore, After: []memory.Memory{m}, CreatedAt: at}))
	mustT(t, s.Close())

	// Another directory can only be opened once the engine really stopped.
	other := open(t.TempDir())
	mustT(t, other.Close())

	s = open(dir)
	defer s.Close()
	evs, err := s.SessionEvents(ctx, tenant, "s1")
	mustT(t, err)
	if len(evs) != 1 || evs[0].Content != ev.Content || !evs[0].TS.Equal(at) {
		t.Fatalf("events after restart = %+v", evs)
	}
	if _, err := s.Episode(ctx, tenant, ep.ID); err != nil {
		t.Fatalf("episode after restart: %v", err)
	}
	if got, err := s.Memory(ctx, tenant, "m1"); err != nil || got.Content != "c" {
		t.Fatalf("memory after restart = %+v, %v", got, err)
	}
	if _, err := s.Decision(ctx, tenant, "d1"); err != nil {
		t.Fatalf("decision after restart: %v", err)
	}
}

// Duplicate rows that reach the tables (a retry racing the original, or a
// retry the server applied twice) are never visible to readers.
func TestRetriedWritesLeaveNoVisibleDuplicates(t *testing.T) {
	ctx := context.Background()
	s := openChDB(t, "")
	tenant := storetest.Tenant(t)
	evs := make([]memory.Event, 50)
	for i := range evs {
		evs[i] = memory.Event{ID: memory.EventID(tenant, "s1", i), Tenant: tenant, SessionID: "s1", Seq: i, Role: memory.RoleTool, Content: fmt.Sprint(i), TS: at.Add(time.Duration(i) * time.Millisecond)}
	}
	// Without merges the duplicate rows stay in the table, so the readers'
	// deduplication is what is tested.
	mustT(t, s.Exec(ctx, "SYSTEM STOP MERGES events"))
	defer s.Exec(ctx, "SYSTEM START MERGES events")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if err := s.AppendEvents(ctx, evs); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// Bypass the adapter's check: the same rows written again, as a lost
	// acknowledgement followed by a retry would.
	mustT(t, s.Exec(ctx, "INSERT INTO events SELECT * FROM events WHERE tenant = {t:String}", clickhouse.ChNamed("t", tenant)))
	got, err := s.SessionEvents(ctx, tenant, "s1")
	mustT(t, err)
	if len(got) != len(evs) {
		t.Fatalf("readers see %d events after retries, want %d", len(got), len(evs))
	}
	for i, e := range got {
		if e.Seq != i {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
	stored := sqlText(t, s, "SELECT count() > 50 FROM events", clickhouse.FormatTSV)
	if stored != "greater(count(), 50)\n1\n" {
		t.Fatalf("the test did not store duplicate rows (%q): it proves nothing", stored)
	}

	m := memory.Memory{ID: "m1", Tenant: tenant, Version: 1, Kind: memory.KindFact, Status: memory.StatusLive, Content: "a"}
	mustT(t, s.PutMemories(ctx, []memory.Memory{m}))
	m.Content = "a, rewritten"
	mustT(t, s.PutMemories(ctx, []memory.Memory{m}))
	hist, err := s.History(ctx, tenant, "m1")
	mustT(t, err)
	if len(hist) != 1 || hist[0].Content != "a, rewritten" {
		t.Fatalf("history after rewriting version 1 = %+v, want one copy with the last write", hist)
	}
	cur, err := s.Memory(ctx, tenant, "m1")
	mustT(t, err)
	if cur.Content != "a, rewritten" {
		t.Fatalf("current version after a rewrite = %q", cur.Content)
	}

	d := memory.Decision{ID: "d1", Tenant: tenant, Action: memory.ActionStore, Reason: "first", CreatedAt: at}
	mustT(t, s.LogDecision(ctx, d))
	d.Reason, d.CreatedAt = "retry", at.Add(time.Hour)
	mustT(t, s.LogDecision(ctx, d))
	mustT(t, s.Exec(ctx, "INSERT INTO merge_decisions SELECT * REPLACE ('raced' AS reason, write_seq + 1 AS write_seq) FROM merge_decisions WHERE tenant = {t:String}", clickhouse.ChNamed("t", tenant)))
	ds, err := s.Decisions(ctx, memory.DecisionFilter{Tenant: tenant})
	mustT(t, err)
	if len(ds) != 1 || ds[0].Reason != "first" {
		t.Fatalf("decisions after retries = %+v, want the first write only", ds)
	}
}

// TestWritesOrderedWithoutTrustingClocks writes from two processes on one
// database, the first with a clock an hour ahead: each later write replaces
// the earlier one (an episode rewritten, a setting changed, a memory
// version written again by a retry) although its process's clock is behind.
func TestWritesOrderedWithoutTrustingClocks(t *testing.T) {
	ctx := context.Background()
	db := freshDatabase("skew")
	ahead, behind := openChDB(t, db), openChDB(t, db)
	ahead.SkewClock(time.Hour)
	tenant := storetest.Tenant(t)

	ep := memory.Episode{ID: memory.EpisodeID(tenant, "s1"), Tenant: tenant, SessionID: "s1", Task: "first draft",
		Status: memory.EpisodeLive, StartedAt: at, EndedAt: at, CreatedAt: at}
	mustT(t, ahead.PutEpisode(ctx, ep))
	ep.Task = "rewritten"
	mustT(t, behind.PutEpisode(ctx, ep))
	got, err := ahead.Episode(ctx, tenant, ep.ID)
	mustT(t, err)
	if got.Task != "rewritten" {
		t.Errorf("an episode rewritten by a process whose clock is behind reads %q, want the rewrite", got.Task)
	}

	mustT(t, ahead.PutSetting(ctx, "skew.test", "first"))
	mustT(t, behind.PutSetting(ctx, "skew.test", "second"))
	if v, err := ahead.Setting(ctx, "skew.test"); err != nil || v != "second" {
		t.Errorf("a setting changed by a process whose clock is behind reads %q (%v), want second", v, err)
	}

	m := memory.Memory{ID: "m1", Tenant: tenant, Version: 1, Kind: memory.KindFact, Status: memory.StatusLive, Content: "first attempt"}
	mustT(t, ahead.PutMemories(ctx, []memory.Memory{m}))
	m.Content = "retried"
	mustT(t, behind.PutMemories(ctx, []memory.Memory{m}))
	hist, err := ahead.History(ctx, tenant, "m1")
	mustT(t, err)
	if len(hist) != 1 || hist[0].Content != "retried" {
		t.Errorf("version 1 written again by a process whose clock is behind: history %+v, want one copy, the retry", hist)
	}
	m.Version, m.Content = 2, "second version"
	mustT(t, behind.PutMemories(ctx, []memory.Memory{m}))
	if cur, err := ahead.Memory(ctx, tenant, "m1"); err != nil || cur.Version != 2 {
		t.Errorf("current memory = %+v (%v), want version 2", cur, err)
	}
}

// Values travel as typed parameters: text full of SQL metacharacters is
// stored and matched as itself.
func TestHostileTextRoundTrips(t *testing.T) {
	ctx := context.Background()
	s := openChDB(t, "")
	tenant := storetest.Tenant(t)
	nasty := []string{`s' OR '1'='1`, `back\slash\\ and \' quote`, "tab\tnew\nline\r\x00nul", `{tenant:String}`, `%_`}
	for i, text := range nasty {
		ev := memory.Event{ID: fmt.Sprint("e", i), Tenant: tenant, SessionID: text, Role: memory.RoleUser, Content: text, ToolArgs: text, TS: at}
		mustT(t, s.AppendEvents(ctx, []memory.Event{ev}))
	}
	for _, text := range nasty {
		got, err := s.SessionEvents(ctx, tenant, text)
		mustT(t, err)
		if len(got) != 1 || got[0].SessionID != text || got[0].Content != text || got[0].ToolArgs != text {
			t.Fatalf("session %q read back as %+v", text, got)
		}
	}
	m := memory.Memory{ID: `m'1\`, Tenant: tenant, Version: 1, Kind: memory.KindFact, Status: memory.StatusLive,
		Content: nasty[1], Sources: nasty, Entities: nasty}
	mustT(t, s.PutMemories(ctx, []memory.Memory{m}))
	for _, src := range nasty {
		ms, err := s.Memories(ctx, memory.MemoryFilter{Tenant: tenant, Source: src})
		mustT(t, err)
		if len(ms) != 1 || !slices.Equal(ms[0].Entities, nasty) || ms[0].ID != m.ID {
			t.Fatalf("memory by source %q = %+v", src, ms)
		}
	}
	ms, err := s.Memories(ctx, memory.MemoryFilter{Tenant: tenant, IDs: []string{m.ID, `x') OR 1=1 --`}})
	mustT(t, err)
	if len(ms) != 1 {
		t.Fatalf("memories by hostile IDs = %d", len(ms))
	}
	// LIKE wildcards in a search are literal.
	hits, err := s.SearchEvents(ctx, clickhouse.EventSearch{Tenant: tenant, Text: "%_"})
	mustT(t, err)
	if len(hits) != 1 || hits[0].Content != "%_" {
		t.Fatalf("search for %%_ = %+v", hits)
	}
}

func TestKeywordSearchChineseAndEnglish(t *testing.T) {
	ctx := context.Background()
	s := openChDB(t, "")
	tenant := storetest.Tenant(t)
	texts := []string{"以后所有报表都用 UTC 时间", "Parse the CSV with GBK encoding", "今天的天气很好", "报表导出失败：编码错误"}
	var evs []memory.Event
	for i, c := range texts {
		evs = append(evs, memory.Event{ID: fmt.Sprint("e", i), Tenant: tenant, SessionID: "s", Seq: i, Role: memory.RoleUser, Content: c, TS: at.Add(time.Duration(i) * time.Minute)})
	}
	mustT(t, s.AppendEvents(ctx, evs))
	mustT(t, s.AppendEvents(ctx, []memory.Event{{ID: "o", Tenant: tenant + "x", SessionID: "s", Role: memory.RoleUser, Content: "报表", TS: at}}))
	for q, want := range map[string][]string{
		"报表":      {texts[3], texts[0]}, // newest first
		"csv":     {texts[1]},
		"GBK ENC": {texts[1]},
		"编码":      {texts[3]},
		"不存在的词":   nil,
	} {
		hits, err := s.SearchEvents(ctx, clickhouse.EventSearch{Tenant: tenant, Text: q})
		mustT(t, err)
		var got []string
		for _, h := range hits {
			got = append(got, h.Content)
		}
		if !slices.Equal(got, want) {
			t.Errorf("search %q = %q, want %q", q, got, want)
		}
	}
	since, err := s.SearchEvents(ctx, clickhouse.EventSearch{Tenant: tenant, Text: "报表", Since: at.Add(time.Minute)})
	mustT(t, err)
	if len(since) != 1 || since[0].Content != texts[3] {
		t.Errorf("search with since = %+v", since)
	}
	// The ngram index is usable for this predicate (it prunes granules).
	plan := sqlText(t, s, "EXPLAIN indexes = 1 SELECT id FROM events WHERE tenant = 'x' AND lowerUTF8(content) LIKE '%报表%'", clickhouse.FormatTSV)
	if !strings.Contains(plan, "idx_content_ngram") {
		t.Fatalf("the query plan does not use the ngram index:\n%s", plan)
	}
}

func TestQueryReadOnly(t *testing.T) {
	ctx := context.Background()
	s := openChDB(t, "")
	tenant := storetest.Tenant(t)
	mustT(t, s.PutEpisode(ctx, memory.Episode{ID: "ep1", Tenant: tenant, Task: "导入 CSV\tfile", Status: memory.EpisodeLive, EndedAt: at}))

	table := sqlText(t, s, "SELECT tenant, task, ended_at FROM episodes", clickhouse.FormatTable)
	if !strings.Contains(table, "tenant") || !strings.Contains(table, `导入 CSV\tfile`) || !strings.Contains(table, "2026-03-02 09:30:15.123") || !strings.Contains(table, "(1 rows)") {
		t.Fatalf("table output:\n%s", table)
	}
	if got := sqlText(t, s, "SELECT count() FROM episodes", clickhouse.FormatTSV); got != "count()\n1\n" {
		t.Fatalf("tsv output %q", got)
	}
	var row map[string]any
	mustT(t, json.Unmarshal([]byte(sqlText(t, s, "SELECT id, event_count, entities FROM episodes", clickhouse.FormatJSON)), &row))
	if row["id"] != "ep1" || row["event_count"] != float64(0) {
		t.Fatalf("json output %v", row)
	}
	cut := sqlText(t, s, "SELECT number FROM system.numbers LIMIT 5000", clickhouse.FormatTable)
	if !strings.Contains(cut, "output cut at 1000 rows") {
		t.Fatalf("a large result was not cut: %d bytes", len(cut))
	}

	for _, q := range []string{
		"INSERT INTO episodes (tenant, id) VALUES ('x', 'y')",
		"DROP TABLE episodes",
		"ALTER TABLE episodes DELETE WHERE 1",
		"SELECT count() FROM episodes SETTINGS readonly = 0",
		"SET readonly = 0",
	} {
		err := s.QueryReadOnly(ctx, q, &bytes.Buffer{}, clickhouse.QueryOptions{})
		if !memory.IsInvalid(err) || !strings.Contains(strings.ToLower(err.Error()), "readonly") {
			t.Errorf("QueryReadOnly(%q) = %v, want EINVALID about readonly", q, err)
		}
	}
	if got := sqlText(t, s, "SELECT count() FROM episodes", clickhouse.FormatTSV); got != "count()\n1\n" {
		t.Fatalf("episodes after refused writes: %q", got)
	}
	// The session used for read-only queries does not leak its settings.
	mustT(t, s.PutEpisode(ctx, memory.Episode{ID: "ep2", Tenant: tenant, Status: memory.EpisodeLive, EndedAt: at}))
}

func TestConfigValidate(t *testing.T) {
	ok := clickhouse.Config{Addr: []string{"localhost:9000"}}.WithDefaults()
	mustT(t, ok.Validate())
	mustT(t, clickhouse.Config{Addr: []string{"localhost:9000"}, Cluster: "prod-1.eu"}.WithDefaults().Validate())
	for name, c := range map[string]clickhouse.Config{
		"no server":     {},
		"bad protocol":  {Addr: []string{"h:1"}, Protocol: "grpc"},
		"bad database":  {Addr: []string{"h:1"}, Database: "a-b; DROP"},
		"pool":          {Addr: []string{"h:1"}, MaxOpenConns: 2, MaxIdleConns: 3},
		"retention":     {Addr: []string{"h:1"}, Retention: clickhouse.Retention{Default: -time.Hour}},
		"tenant":        {Addr: []string{"h:1"}, Retention: clickhouse.Retention{Tenants: map[string]time.Duration{"bad tenant!": time.Hour}}},
		"bad dsn":       {DSN: "://nope"},
		"negative time": {Addr: []string{"h:1"}, QueryTimeout: -1},
		"bad cluster":   {Addr: []string{"h:1"}, Cluster: "c`; DROP DATABASE x"},
		"chdb cluster":  {Transport: http.DefaultTransport, Cluster: "c1"},
	} {
		if err := c.WithDefaults().Validate(); !memory.IsInvalid(err) {
			t.Errorf("%s: Validate() = %v, want EINVALID", name, err)
		}
	}
	dsn := clickhouse.Config{DSN: "http://localhost:8123/mydb"}.WithDefaults()
	if dsn.Database != "mydb" || dsn.Protocol != clickhouse.HTTP {
		t.Errorf("DSN defaults: database %q protocol %q", dsn.Database, dsn.Protocol)
	}
}

// Retention is written per row from the tenant's policy, and the TTL
// deletes rows whose retention has passed.
func TestRetentionPerTenant(t *testing.T) {
	ctx := context.Background()
	s := openChDB(t, "", func(c *chdb.Config) {
		c.Store.Retention = clickhouse.Retention{Default: 90 * 24 * time.Hour, Tenants: map[string]time.Duration{"keep": 0, "short": 36 * time.Hour}}
	})
	now := time.Now().UTC()
	old := now.Add(-10 * 24 * time.Hour)
	for _, tenant := range []string{"keep", "short", "other"} {
		mustT(t, s.AppendEvents(ctx, []memory.Event{
			{ID: "new", Tenant: tenant, SessionID: "s", Role: memory.RoleUser, TS: now},
			{ID: "old", Tenant: tenant, SessionID: "s", Seq: 1, Role: memory.RoleUser, TS: old},
		}))
	}
	mustT(t, s.Exec(ctx, "OPTIMIZE TABLE events FINAL"))
	got := sqlText(t, s, "SELECT tenant, id, retention_days FROM events ORDER BY tenant, id", clickhouse.FormatTSV)
	want := "tenant\tid\tretention_days\nkeep\tnew\t0\nkeep\told\t0\nother\tnew\t90\nother\told\t90\nshort\tnew\t2\n"
	if got != want {
		t.Fatalf("events after TTL:\n%s\nwant:\n%s", got, want)
	}
}

// A running process can serve its engine to others over loopback HTTP (a
// chDB directory has one owner): the same adapter, as a server client,
// reads what the owner wrote.
func TestServeEngineOverLoopback(t *testing.T) {
	ctx := context.Background()
	owner := openChDB(t, "")
	tenant := storetest.Tenant(t)
	mustT(t, owner.PutEpisode(ctx, memory.Episode{ID: "ep1", Tenant: tenant, Task: "served", Status: memory.EpisodeLive, EndedAt: at}))
	srv := httptest.NewServer(owner.Handler())
	defer srv.Close()
	client, err := clickhouse.Open(ctx, clickhouse.Config{
		Addr: []string{strings.TrimPrefix(srv.URL, "http://")}, Protocol: clickhouse.HTTP,
		Database: owner.Config().Database, SkipMigrate: true,
	})
	mustT(t, err)
	defer client.Close()
	ep, err := client.Episode(ctx, tenant, "ep1")
	if err != nil || ep.Task != "served" {
		t.Fatalf("episode through the served engine = %+v, %v", ep, err)
	}
	var b bytes.Buffer
	mustT(t, client.QueryReadOnly(ctx, "SELECT count() FROM episodes", &b, clickhouse.QueryOptions{Format: clickhouse.FormatTSV}))
	if b.String() != "count()\n1\n" {
		t.Fatalf("sql through the served engine = %q", b.String())
	}
	if err := client.QueryReadOnly(ctx, "DROP TABLE episodes", &b, clickhouse.QueryOptions{}); !memory.IsInvalid(err) {
		t.Fatalf("a write through the served engine's read-only path = %v", err)
	}
}

// An episode caught half-way through archiving (copied to the archive, not
// yet deleted from the hot table) is read once, as archived.
func TestEpisodeInBothTablesReadsOnce(t *testing.T) {
	ctx := context.Background()
	s := openChDB(t, "")
	tenant := storetest.Tenant(t)
	mustT(t, s.PutEpisode(ctx, memory.Episode{ID: "ep1", Tenant: tenant, Task: "t", Status: memory.EpisodeLive, EndedAt: at}))
	mustT(t, s.Exec(ctx, "INSERT INTO episodes_archive SELECT * REPLACE ('cold' AS status, write_seq + 1 AS write_seq), now64(3) FROM episodes"))
	got, err := s.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, Statuses: []memory.EpisodeStatus{memory.EpisodeLive, memory.EpisodeCold}})
	mustT(t, err)
	if len(got) != 1 || got[0].Status != memory.EpisodeCold {
		t.Fatalf("an episode in both tables reads as %+v, want once, cold", got)
	}
	ep, err := s.Episode(ctx, tenant, "ep1")
	mustT(t, err)
	if ep.Status != memory.EpisodeCold {
		t.Fatalf("Episode of a half-archived episode: status %s, want cold", ep.Status)
	}
	mustT(t, s.ArchiveEpisodes(ctx, tenant, []string{"ep1"})) // completes the move
	hot, err := s.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant})
	mustT(t, err)
	if len(hot) != 0 {
		t.Fatalf("hot episodes after the move completed: %+v", hot)
	}
}

// Filters apply to the current version even while old versions sit in
// unmerged parts: WHERE runs after FINAL has folded them.
func TestFiltersSeeOnlyCurrentVersionBeforeMerges(t *testing.T) {
	ctx := context.Background()
	s := openChDB(t, "")
	tenant := storetest.Tenant(t)
	mustT(t, s.Exec(ctx, "SYSTEM STOP MERGES memories_current"))
	defer s.Exec(ctx, "SYSTEM START MERGES memories_current")
	v1 := memory.Memory{ID: "m1", Tenant: tenant, Version: 1, Kind: memory.KindRule, Status: memory.StatusLive, ContentHash: "h1"}
	mustT(t, s.PutMemories(ctx, []memory.Memory{v1}))
	v2 := v1
	v2.Version, v2.Status, v2.ContentHash = 2, memory.StatusSuperseded, "h2"
	mustT(t, s.PutMemories(ctx, []memory.Memory{v2}))
	if parts := sqlText(t, s, "SELECT count() FROM system.parts WHERE database = currentDatabase() AND table = 'memories_current' AND active", clickhouse.FormatTSV); parts != "count()\n2\n" {
		t.Fatalf("expected two unmerged parts, got %q: the test proves nothing", parts)
	}
	for name, f := range map[string]memory.MemoryFilter{
		"old status": {Statuses: []memory.Status{memory.StatusLive}},
		"old hash":   {ContentHash: "h1"},
	} {
		f.Tenant = tenant
		ms, err := s.Memories(ctx, f)
		mustT(t, err)
		if len(ms) != 0 {
			t.Errorf("%s matched a superseded version: %+v", name, ms)
		}
	}
}

// A read of recall's fields answers every field of the memory but those
// memory.RecallOmits names, which it leaves zero, and bypasses the cache
// (whose rows are whole).
func TestRecallFieldsReadAllButOmits(t *testing.T) {
	ctx := context.Background()
	s := openChDB(t, "")
	tenant := storetest.Tenant(t)
	m := memory.Memory{ID: "m1", Tenant: tenant, Version: 2, Scope: "agent:ci", Kind: memory.KindLesson, Content: "run make lint before pushing",
		CounterExample: "pushing unlinted code broke CI", TaskType: "ci", Entities: []string{"make"}, ContentHash: "h1", Confidence: 0.7,
		Sources: []string{"ep1"}, Evidence: []string{"ev1"}, Status: memory.StatusLive, Supersedes: []string{"m0"},
		ValidFrom: at, ValidTo: at.Add(time.Hour), Decay: 0.9, DecayAnchor: at, Pinned: true, Flags: []string{"f"},
		Helped: 2, Hurt: 1, Reason: "inserted", DecisionID: "d1", CreatedAt: at, UpdatedAt: at}
	mustT(t, s.PutMemories(ctx, []memory.Memory{m}))
	whole, err := s.Memories(ctx, memory.MemoryFilter{Tenant: tenant, IDs: []string{"m1"}, NoUsage: true})
	mustT(t, err)
	narrow, err := s.Memories(ctx, memory.MemoryFilter{Tenant: tenant, IDs: []string{"m1"}, NoUsage: true, RecallFields: true})
	mustT(t, err)
	if len(whole) != 1 || len(narrow) != 1 {
		t.Fatalf("read %d whole and %d narrow memories, want 1 each", len(whole), len(narrow))
	}
	want := whole[0]
	w := reflect.ValueOf(&want).Elem()
	for _, name := range memory.RecallOmits {
		f := w.FieldByName(name)
		if !f.IsValid() {
			t.Fatalf("RecallOmits names %q, which is no field of memory.Memory", name)
		}
		if f.IsZero() {
			t.Fatalf("the whole read left %s zero: the test stores every field", name)
		}
		f.SetZero()
	}
	if !reflect.DeepEqual(narrow[0], want) {
		t.Fatalf("narrow read =\n%+v\nwant the whole read but RecallOmits\n%+v", narrow[0], want)
	}
}
