//go:build linux && amd64

package chdb

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/store/clickhouse"
)

func testLibPath(t *testing.T) string {
	p, err := LibPathFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func openTest(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(context.Background(), Config{DataDir: dir, LibPath: testLibPath(t)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMissingLibrarySaysHowToFetchIt(t *testing.T) {
	_, err := Open(context.Background(), Config{DataDir: t.TempDir(), LibPath: filepath.Join(t.TempDir(), "libchdb.so")})
	if !errors.Is(err, ErrLibraryMissing) || !strings.Contains(err.Error(), "make chdb") || !strings.Contains(err.Error(), "fetch-chdb.sh") {
		t.Fatalf("Open without the library = %v; want ErrLibraryMissing naming `make chdb` and scripts/fetch-chdb.sh", err)
	}
}

func TestConfigValidate(t *testing.T) {
	for name, c := range map[string]Config{
		"no data dir":  {Sessions: 1},
		"no sessions":  {DataDir: "x", Sessions: -1},
		"names server": {DataDir: "x", Sessions: 1, Store: clickhouse.Config{Addr: []string{"h:9000"}}},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%s: Validate() = nil, want an error", name)
		}
	}
	if err := (Config{DataDir: "x", Sessions: 1}).Validate(); err != nil {
		t.Errorf("valid config: %v", err)
	}
}

// The Go runtime must keep its signal handlers once chDB runs: a nil
// dereference stays a recoverable panic, and SIGINT/SIGTERM still reach
// os/signal so that `hindsight dev` shuts down cleanly. (chDB does install a
// handler for SIGRTMIN, which ClickHouse uses to collect stack traces and
// the Go runtime leaves alone.)
func TestGoSignalHandlersSurviveEngine(t *testing.T) {
	snapshot := func() map[syscall.Signal]kernelSigaction {
		m := map[syscall.Signal]kernelSigaction{}
		for sig := syscall.Signal(1); sig < 32; sig++ {
			if sig != syscall.SIGKILL && sig != syscall.SIGSTOP {
				var a kernelSigaction
				sigaction(sig, nil, &a)
				m[sig] = a
			}
		}
		return m
	}
	before := snapshot()
	s := openTest(t, t.TempDir())
	defer s.Close()
	var out strings.Builder
	if err := s.QueryReadOnly(context.Background(), "SELECT 1", &out, clickhouse.QueryOptions{}); err != nil {
		t.Fatal(err)
	}
	for sig, a := range snapshot() {
		if a != before[sig] {
			t.Errorf("the handler of %v changed when chDB started", sig)
		}
	}
	recovered := func() (r any) {
		defer func() { r = recover() }()
		var p *int
		return *p
	}()
	if recovered == nil {
		t.Fatal("nil dereference did not panic")
	}
}

// A second process cannot own the same data directory; it gets an error
// that says so instead of corrupting it.
func TestDataDirectoryIsExclusiveToOneProcess(t *testing.T) {
	if dir := os.Getenv("HINDSIGHT_CHDB_LOCK_CHILD"); dir != "" {
		_, err := Open(context.Background(), Config{DataDir: dir, LibPath: testLibPath(t)})
		if err == nil {
			os.Exit(3)
		}
		io.WriteString(os.Stdout, err.Error())
		os.Exit(0)
	}
	dir := t.TempDir()
	s := openTest(t, dir)
	defer s.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDataDirectoryIsExclusiveToOneProcess$")
	cmd.Env = append(os.Environ(), "HINDSIGHT_CHDB_LOCK_CHILD="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v (output %q)", err, out)
	}
	if !strings.Contains(string(out), "in use by another process") || !strings.Contains(string(out), "pid") {
		t.Fatalf("second owner got %q, want an in-use error naming the pid", out)
	}
}

// Settings sent with one request apply to that request only: the session
// goes back to the defaults for the next one.
// roundTrip sends req through rt and returns the body of its answer,
// which must be 200 OK.
func roundTrip(t *testing.T, rt *transport, req *http.Request) string {
	t.Helper()
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	return string(b)
}

func TestSettingsApplyPerRequest(t *testing.T) {
	s := openTest(t, t.TempDir())
	defer s.Close()
	rt := &transport{eng: s.eng}
	get := func(url string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader("SELECT getSetting('max_threads')"))
		return strings.TrimSpace(roundTrip(t, rt, req))
	}
	def := get("http://chdb/?default_format=TSV")
	if got := get("http://chdb/?default_format=TSV&max_threads=7"); got != "7" {
		t.Fatalf("max_threads with the setting = %s, want 7", got)
	}
	if got := get("http://chdb/?default_format=TSV"); got != def {
		t.Fatalf("max_threads after a request that set it = %s, want the default %s", got, def)
	}
}

// TestDescribeIsCachedUntilTheTableChanges asks DESCRIBE TABLE (which the
// driver sends before every batch insert) twice, changes the table, and
// asks again: the answer follows the change.
func TestDescribeIsCachedUntilTheTableChanges(t *testing.T) {
	s := openTest(t, t.TempDir())
	defer s.Close()
	rt := &transport{eng: s.eng, database: "default"}
	run := func(sql string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, "http://chdb/?default_format=TSV", strings.NewReader(sql))
		return roundTrip(t, rt, req)
	}
	run("CREATE TABLE described (a String) ENGINE = MergeTree ORDER BY a")
	first := run("DESCRIBE TABLE described")
	if again := run("DESCRIBE TABLE described"); again != first || !strings.Contains(first, "a\tString") {
		t.Fatalf("DESCRIBE twice = %q then %q", first, again)
	}
	if _, _, hit := rt.described.get("default\x00TSV\x00DESCRIBE TABLE described"); !hit {
		t.Fatal("the answer to DESCRIBE TABLE is not cached")
	}
	run("ALTER TABLE described ADD COLUMN b UInt32")
	if after := run("DESCRIBE TABLE described"); !strings.Contains(after, "b\tUInt32") {
		t.Fatalf("DESCRIBE after ADD COLUMN = %q, want column b", after)
	}
}

func TestParseRequest(t *testing.T) {
	req, _ := http.NewRequest(http.MethodPost,
		"http://chdb/?database=hs&default_format=Native&param_tenant=a%27b&max_threads=2&query_id=q1&query=INSERT+INTO+events+%28a%2C+b%29+FORMAT+Native",
		strings.NewReader("\x00\x01"))
	r, err := parseRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	if !r.insert || r.format != "Native" || strings.TrimSpace(r.sql) != "INSERT INTO events (a, b)" || r.database != "hs" ||
		r.params["tenant"] != "a'b" || r.settings["max_threads"] != "2" || len(r.settings) != 1 {
		t.Fatalf("parsed insert = %+v", r)
	}
	for name, url := range map[string]string{
		"native compression": "http://chdb/?compress=1",
		"bad setting name":   "http://chdb/?max%20threads=1",
		"bad database":       "http://chdb/?database=a%60b",
	} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader("SELECT 1"))
		if _, err := parseRequest(req); err == nil {
			t.Errorf("%s: parseRequest accepted %s", name, url)
		}
	}
}

// TestHandlerAnswersInTheStoresDatabase sends 300 concurrent requests
// that name no database through the HTTP handler, read-only and not, while
// the store works on its own sessions: every one runs in the store's
// database, whichever pooled or fresh session serves it.
func TestHandlerAnswersInTheStoresDatabase(t *testing.T) {
	s := openTest(t, t.TempDir())
	defer s.Close()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	const n = 300
	var wg sync.WaitGroup
	answers := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			url := srv.URL + "/?default_format=TSV"
			if i%3 == 0 {
				url += "&readonly=1"
			}
			if i%5 == 0 {
				// The store's own work, on the pool, in between.
				if _, err := s.Tenants(context.Background()); err != nil {
					answers <- "store: " + err.Error()
					return
				}
			}
			resp, err := http.Post(url, "text/plain", strings.NewReader("SELECT currentDatabase()"))
			if err != nil {
				answers <- err.Error()
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			answers <- strings.TrimSpace(string(b))
		}()
	}
	wg.Wait()
	close(answers)
	wrong := map[string]int{}
	for a := range answers {
		if a != "hindsight" {
			wrong[a]++
		}
	}
	if len(wrong) > 0 {
		t.Fatalf("requests without a database answered elsewhere: %v", wrong)
	}
}

// TestPurgeFinishesWhatAFailedAttemptBegan leaves a memory as a purge
// that failed after deleting its versions would (the current row and the
// usage still there) and purges again: the retry must remove the rest,
// not take the missing versions for "already gone".
func TestPurgeFinishesWhatAFailedAttemptBegan(t *testing.T) {
	s := openTest(t, t.TempDir())
	defer s.Close()
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	m := memory.Memory{ID: "mem_p1", Tenant: "acme", Version: 1, Scope: memory.SharedScope, Kind: memory.KindFact,
		Content: "The vault code is 4417.", ContentHash: memory.ContentHash(memory.KindFact, "The vault code is 4417."),
		Status: memory.StatusLive, Confidence: 0.5, Decay: 1, DecayAnchor: now, ValidFrom: now, CreatedAt: now, UpdatedAt: now}
	if err := s.PutMemories(ctx, []memory.Memory{m}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordUsage(ctx, []memory.Usage{{Tenant: "acme", MemoryID: m.ID, Kind: memory.UsageRecalled, At: now}}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/", "text/plain", strings.NewReader("DELETE FROM memory_versions WHERE tenant = 'acme' AND id = 'mem_p1'"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the first half of the purge: %d %s", resp.StatusCode, b)
	}
	if _, err := s.Purge(ctx, memory.PurgeRequest{Tenant: "acme", MemoryIDs: []string{m.ID}}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Memory(ctx, "acme", m.ID); !memory.IsNotFound(err) {
		t.Fatalf("after the retried purge the memory reads %+v, %v", got, err)
	}
	for _, q := range []string{
		"SELECT count() FROM memories_current WHERE id = 'mem_p1' FORMAT TSV",
		"SELECT count() FROM memory_usage WHERE memory_id = 'mem_p1' FORMAT TSV",
	} {
		resp, err := http.Post(srv.URL+"/", "text/plain", strings.NewReader(q))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := strings.TrimSpace(string(b)); got != "0" {
			t.Errorf("%s: %s rows left", q, got)
		}
	}
}

// TestConcurrentFirstMigrations opens four stores at once on a database
// that does not exist yet, as processes starting together against one
// server do: every one opens, the schema is complete, and each migration
// was applied once, by the one elected to (the others waited), so that no
// statement such as a view dropped and created again runs while another
// process already writes.
func TestConcurrentFirstMigrations(t *testing.T) {
	dir := t.TempDir()
	first := openTest(t, dir) // owns the engine; the others share it
	defer first.Close()
	const n = 4
	var wg sync.WaitGroup
	stores := make([]*Store, n)
	errs := make([]error, n)
	applied := &countingHandler{msg: "clickhouse: applied migration"}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := Config{DataDir: dir, LibPath: testLibPath(t)}
			cfg.Store.Database = "racing"
			cfg.Store.Logger = slog.New(applied)
			stores[i], errs[i] = Open(context.Background(), cfg)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("store %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	recorded, err := stores[0].AppliedMigrations(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want, err := first.AppliedMigrations(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(recorded) != len(want) {
		t.Fatalf("racing opens recorded %d migrations, want %d", len(recorded), len(want))
	}
	if got := applied.n.Load(); int(got) != len(want) {
		t.Fatalf("%d racing opens applied migrations %d times, want once each (%d): one process migrates, the others wait", n, got, len(want))
	}
	if _, err := stores[1].Memories(context.Background(), memory.MemoryFilter{Tenant: "acme"}); err != nil {
		t.Fatalf("the racing database is not usable: %v", err)
	}
}

// countingHandler counts the log records with one message.
type countingHandler struct {
	msg string
	n   atomic.Int32
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.n.Add(1)
	}
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

// TestDeadlinesDoNotResetSessions sends statements whose callers have
// different deadlines, in turn: each deadline becomes a max_execution_time
// the engine enforces, yet the sessions are not SET anew for every
// statement, as they were when each deadline was its own value.
func TestDeadlinesDoNotResetSessions(t *testing.T) {
	s := openTest(t, t.TempDir())
	defer s.Close()
	rt := &transport{eng: s.eng, database: "default"}
	run := func(timeout time.Duration) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://chdb/?default_format=TSV",
			strings.NewReader("SELECT getSetting('max_execution_time')"))
		return strings.TrimSpace(roundTrip(t, rt, req))
	}
	before := s.eng.sets.Load()
	for i := range 10 {
		short := 30*time.Second - time.Duration(i)*time.Second
		if got := run(short); got != "32" {
			t.Fatalf("max_execution_time for a caller with %v left = %s, want 32", short, got)
		}
		long := 500*time.Second + time.Duration(i)*time.Second
		if got := run(long); got != "512" {
			t.Fatalf("max_execution_time for a caller with %v left = %s, want 512", long, got)
		}
	}
	if sets := s.eng.sets.Load() - before; sets > 2 {
		t.Errorf("20 statements of two callers ran %d SETs, want one per caller's bound", sets)
	}
}

func TestExecutionBound(t *testing.T) {
	for secs, want := range map[int]int{1: 1, 2: 2, 33: 64, 64: 64, 125: 128, 605: 1024} {
		if got := executionBound(secs); got != want || got < secs || got >= 2*secs && secs > 1 {
			t.Errorf("executionBound(%d) = %d, want %d: at least secs and less than twice it", secs, got, want)
		}
	}
}

// TestSmallPartsPackTheirSkipIndexes stores an event and finds its part's
// skip indexes in one archive (without the setting, the events table's
// part has two files for each of its four indexes), and that after opening
// the store again no table is left to pack.
func TestSmallPartsPackTheirSkipIndexes(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	ctx := context.Background()
	ev := memory.Event{ID: "e0", Tenant: "acme", SessionID: "s1", Role: memory.RoleUser, Content: "use the staging database", TS: time.Now()}
	if err := s.AppendEvents(ctx, []memory.Event{ev}); err != nil {
		t.Fatal(err)
	}
	var packed, perIndex int
	heavyFiles := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.Name() == "skp_idx.packed":
			packed++
		case strings.HasPrefix(d.Name(), "skp_idx_"):
			perIndex++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if packed == 0 || perIndex != 0 {
		t.Fatalf("parts hold %d packed skip-index archives and %d skip-index files, want at least one archive and no files", packed, perIndex)
	}
	sess, err := s.eng.acquire(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := s.eng.query(sess, "SELECT path FROM system.parts WHERE database = {db:String} AND table = 'events' AND active", "TSV", map[string]string{"db": s.database})
	s.eng.put(sess, true)
	if err != nil || len(strings.Fields(string(out))) != 1 {
		t.Fatalf("the events' parts: %q, %v; want one", out, err)
	}
	files, err := os.ReadDir(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Name() == "columns_substreams.txt" || strings.HasSuffix(f.Name(), ".cmrk3") || f.Name() == "primary.cidx" {
			heavyFiles[f.Name()] = true
		}
	}
	if len(heavyFiles) > 0 {
		t.Fatalf("an event's part has %v; with lightParts it has neither substream marks nor compressed marks or key", heavyFiles)
	}
	got, err := s.SessionEvents(ctx, "acme", "s1")
	if err != nil || len(got) != 1 || got[0].Content != ev.Content {
		t.Fatalf("events read back = %v, %v; want the one stored", got, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openTest(t, dir)
	defer s.Close()
	sess, err = s.eng.acquire(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.eng.put(sess, true)
	if left, err := unpacked(s.eng, sess, s.database); err != nil || len(left) != 0 {
		t.Fatalf("tables left unpacked after opening again = %v, %v; want none", left, err)
	}
	if left, err := heavy(s.eng, sess, s.database); err != nil || len(left) != 0 {
		t.Fatalf("tables left without lightParts after opening again = %v, %v; want none", left, err)
	}
}
