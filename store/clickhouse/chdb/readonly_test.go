//go:build linux && amd64

package chdb

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/store/clickhouse"
)

// Every way found to write or to reach outside the database through the
// dev SQL endpoint, and what a reader sends, read as ClickHouse reads it.
func TestConfined(t *testing.T) {
	refused := map[string]string{
		// ClickHouse nests comments: the first */ closes the inner one.
		"a write behind nested comments":  "/* /* */ SELECT */ CREATE TABLE hindsight.pwn (x UInt8) ENGINE = Memory",
		"a write behind a line comment":   "-- SELECT\nDROP TABLE hindsight.events",
		"a write after a read":            "SELECT 1; DROP TABLE hindsight.events",
		"INTO OUTFILE":                    "SELECT * FROM hindsight.events INTO OUTFILE '/tmp/x.tsv'",
		"INTO OUTFILE in lower case":      "select 1 into outfile '/tmp/x'",
		"FROM INFILE":                     "INSERT INTO hindsight.events FROM INFILE '/tmp/x' FORMAT CSV",
		"the file function":               "SELECT file('/etc/passwd')",
		"the file table function":         "SELECT * FROM file('/etc/passwd', 'LineAsString')",
		"file in upper case":              "SELECT * FROM FILE('/etc/passwd', 'LineAsString')",
		"file in backquotes":              "SELECT `file`('/etc/passwd')",
		"file in double quotes":           `SELECT "file"('/etc/passwd')`,
		"file, a comment, then (":         "SELECT file /* x */ ('/etc/passwd')",
		"file after a no-break space":     "SELECT\u00a0file('/etc/passwd')",
		"file after a zero-width space":   "SELECT 1,\u200bfile('/etc/passwd')",
		"url":                             "SELECT * FROM url('http://169.254.169.254/latest/meta-data/', 'LineAsString')",
		"urlCluster":                      "SELECT * FROM urlCluster('c', 'http://x/', 'LineAsString')",
		"s3":                              "SELECT * FROM s3('https://bucket.s3.amazonaws.com/k', 'CSV')",
		"s3Cluster":                       "SELECT * FROM s3Cluster('c', 'https://b/k')",
		"gcs":                             "SELECT * FROM gcs('https://storage.googleapis.com/b/k')",
		"azureBlobStorage":                "SELECT * FROM azureBlobStorage('conn', 'c', 'k')",
		"hdfs":                            "SELECT * FROM hdfs('hdfs://h/k', 'CSV')",
		"remote":                          "SELECT * FROM remote('10.0.0.1:9000', system.one)",
		"remoteSecure":                    "SELECT * FROM remoteSecure('10.0.0.1:9440', system.one)",
		"cluster":                         "SELECT * FROM cluster('default', system.one)",
		"mysql":                           "SELECT * FROM mysql('db:3306', 'd', 't', 'u', 'p')",
		"postgresql":                      "SELECT * FROM postgresql('db:5432', 'd', 't', 'u', 'p')",
		"mongodb":                         "SELECT * FROM mongodb('db:27017', 'd', 'c', 'u', 'p', 'x String')",
		"redis":                           "SELECT * FROM redis('db:6379', 'k', 'k String')",
		"sqlite":                          "SELECT * FROM sqlite('/var/db.sqlite', 't')",
		"jdbc":                            "SELECT * FROM jdbc('ds', 't')",
		"odbc":                            "SELECT * FROM odbc('dsn', 't')",
		"executable":                      "SELECT * FROM executable('ls', 'LineAsString', 'x String')",
		"input":                           "SELECT * FROM input('x String')",
		"icebergS3":                       "SELECT * FROM icebergS3('https://b/t')",
		"deltaLake":                       "SELECT * FROM deltaLake('https://b/t')",
		"dictionary":                      "SELECT * FROM dictionary('d')",
		"a table function inside EXPLAIN": "EXPLAIN SELECT * FROM file('/etc/passwd')",
		"a function in a lambda":          "SELECT arrayMap(x -> file(x), ['/etc/passwd'])",
		"a heredoc":                       "SELECT $$x$$",
		"an unclosed comment":             "SELECT 1 /* DROP TABLE x",
		"an unclosed string":              "SELECT 'x",
		"# that is no comment":            "SELECT 1 #x",
		"a write":                         "CREATE TABLE hindsight.pwn (x UInt8) ENGINE = Memory",
		"an insert":                       "INSERT INTO hindsight.events SELECT * FROM hindsight.events",
		"a system statement":              "SYSTEM SHUTDOWN",
		"nothing":                         "  -- just a comment",
	}
	for name, stmt := range refused {
		if err := Confined(stmt); err == nil {
			t.Errorf("%s: Confined(%q) let it through", name, stmt)
		}
	}
	for _, stmt := range []string{
		"SELECT count() FROM hindsight.events",
		"select tenant, count() from hindsight.memories_current group by tenant format TSV",
		"WITH x AS (SELECT 1) SELECT * FROM x",
		"(SELECT 1) UNION ALL (SELECT 2)",
		"SHOW TABLES FROM hindsight",
		"DESCRIBE TABLE hindsight.events",
		"EXPLAIN SELECT 1",
		"EXISTS TABLE hindsight.pwn",
		"SELECT 'file(\\'/etc/passwd\\')', `profile`, filename FROM hindsight.t",
		"SELECT 1 -- file('/etc/passwd')\n",
		"/* file('/etc/passwd') /* nested */ */ SELECT 1",
		"# a comment\nSELECT content FROM hindsight.events WHERE tenant = {tenant:String}",
		"SELECT 1;",
		"SELECT 报表, count() FROM t",
	} {
		if err := Confined(stmt); err != nil {
			t.Errorf("Confined(%q) = %v; it only reads the database", stmt, err)
		}
	}
	// The cache of table descriptions reads statements the same way.
	if ReadOnly(refused["a write behind nested comments"]) {
		t.Error("ReadOnly takes a write behind nested comments for a read")
	}
}

// Reproductions against the embedded engine: through the read-only
// handler of hindsight dev's SQL endpoint, a write behind nested comments,
// INTO OUTFILE and file() are refused and leave no trace; what passes the
// statement check runs with readonly=1, which the request cannot lift; and
// what hindsight sql and export send still works.
func TestReadOnlyHandlerRefusesEveryBypass(t *testing.T) {
	s := openTest(t, t.TempDir())
	defer s.Close()
	srv := httptest.NewServer(s.ReadOnlyHandler())
	defer srv.Close()
	post := func(query, stmt string) (int, string) {
		t.Helper()
		resp, err := http.Post(srv.URL+"/?default_format=TSV"+query, "text/plain", strings.NewReader(stmt))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("the-secret-line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outfile := filepath.Join(t.TempDir(), "out.tsv")
	for name, stmt := range map[string]string{
		"nested comments":         "/* /* */ SELECT */ CREATE TABLE hindsight.pwn (x UInt8) ENGINE = Memory",
		"INTO OUTFILE":            "SELECT 'x' INTO OUTFILE '" + outfile + "'",
		"file()":                  "SELECT file('" + secret + "')",
		"the file table function": "SELECT * FROM file('" + secret + "', 'LineAsString')",
		"url":                     "SELECT * FROM url('http://127.0.0.1:1/', 'LineAsString')",
		"executable":              "SELECT * FROM executable('ls', 'LineAsString', 'x String')",
		"a write":                 "DROP TABLE hindsight.events",
	} {
		code, body := post("", stmt)
		if code != http.StatusForbidden || strings.Contains(body, "the-secret-line") {
			t.Errorf("%s: %d %q, want 403", name, code, body)
		}
	}
	// The query parameter and the body are one statement, as a server
	// reads them: a harmless parameter does not carry a body past.
	if code, body := post("&query=SELECT", "file('"+secret+"')"); code != http.StatusForbidden || strings.Contains(body, "the-secret-line") {
		t.Errorf("a statement split between the query and the body: %d %q", code, body)
	}
	if _, err := os.Stat(outfile); !os.IsNotExist(err) {
		t.Errorf("INTO OUTFILE wrote %s", outfile)
	}
	if code, body := post("", "EXISTS TABLE hindsight.pwn"); code != 200 || strings.TrimSpace(body) != "0" {
		t.Errorf("the write behind nested comments created a table: %d %q", code, body)
	}
	// What passes the check runs read-only in the engine: readonly is 1
	// whatever the request asks, and no setting can be changed.
	if code, body := post("&readonly=0", "SELECT getSetting('readonly')"); code != 200 || strings.TrimSpace(body) != "1" {
		t.Errorf("readonly=0 in the URL: %d %q, want the engine's readonly 1", code, body)
	}
	if code, body := post("", "SELECT 1 SETTINGS readonly = 0"); code == 200 || !strings.Contains(body, "READONLY") {
		t.Errorf("a statement's SETTINGS readonly = 0: %d %q, want the engine's READONLY", code, body)
	}
	if code, body := post("&allow_ddl=1", "SELECT 1"); code != http.StatusForbidden || !strings.Contains(body, "allow_ddl") {
		t.Errorf("a setting that is not a query's bound: %d %q", code, body)
	}

	// hindsight sql and hindsight export read through it as before.
	ctx := context.Background()
	if err := s.PutEpisode(ctx, memory.Episode{ID: "ep-1", Tenant: "acme", SessionID: "s-1", UserID: "u-1", Task: "Import the CSV",
		Status: memory.EpisodeLive, EndedAt: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	reader, err := clickhouse.Open(ctx, clickhouse.Config{Addr: []string{strings.TrimPrefix(srv.URL, "http://")}, Protocol: clickhouse.HTTP,
		SkipMigrate: true, DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	var b bytes.Buffer
	if err := reader.QueryReadOnly(ctx, "SELECT count() FROM hindsight.episodes", &b, clickhouse.QueryOptions{Format: clickhouse.FormatTSV}); err != nil {
		t.Fatalf("hindsight sql's query: %v", err)
	}
	eps, err := reader.Episodes(ctx, memory.EpisodeFilter{Tenant: "acme", UserID: "u-1"})
	if err != nil || len(eps) != 1 || eps[0].Task != "Import the CSV" {
		t.Fatalf("hindsight export's read: %+v %v", eps, err)
	}
}
