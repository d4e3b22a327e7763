package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/auth"
	"github.com/hindsight-memory/hindsight/console"
	"github.com/hindsight-memory/hindsight/keys"
	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/store/clickhouse"
	"github.com/hindsight-memory/hindsight/store/clickhouse/chdb"
)

// consoleToken is the console's token in these tests.
const consoleToken = "default-token-0123456789"

// consoleCookie is a sign-in cookie for token signed with key, made the
// way the console makes one.
func consoleCookie(key []byte, token string) *http.Cookie {
	raw, _ := json.Marshal(map[string]any{"n": "nonce-of-a-test-browser", "e": time.Now().Add(time.Hour).Unix(), "r": new(auth.Tokens).Ref(key, token)})
	payload := base64.RawURLEncoding.EncodeToString(raw)
	m := hmac.New(sha256.New, key)
	m.Write([]byte("hindsight-console|session|" + payload))
	return &http.Cookie{Name: "hindsight_console", Value: payload + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))}
}

// signedIn reports whether the console takes the cookie as a sign-in.
func signedIn(t *testing.T, base string, c *http.Cookie) bool {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+console.Path+"/memories", nil)
	req.AddCookie(c)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// TestNoKeyInTheStore starts hindsight dev on the data of an earlier
// version, which kept the deployment's keys in the store's settings. The
// keys move to the data directory's key files (a cookie signed before
// still signs in), `SELECT * FROM settings` then shows none of them, and
// no value SQL can read (every cell of every table, the settings
// included, and whatever SQL can read of the key files) signs a console
// cookie that the console accepts.
func TestNoKeyInTheStore(t *testing.T) {
	ctx := context.Background()
	dataDir := filepath.Join(t.TempDir(), "data")
	s := stackFlags{dataDir: dataDir, logLevel: "warn"}
	wc, err := s.workerConfig(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	old, err := chdb.Open(ctx, *wc.ChDB)
	if err != nil {
		t.Fatal(err)
	}
	legacy := map[keys.Key]string{}
	for i, k := range keys.All {
		legacy[k] = strings.Repeat(fmt.Sprintf("%x", 0xa1+i), 32)
		if err := old.PutSetting(ctx, k.Setting, legacy[k]); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()

	st := startTestDevWith(t, dataDir, func(o *devOptions) {
		withTokens(t, dataDir, "default "+consoleToken+"\n")(o)
		o.clickhouseHTTP = "127.0.0.1:0"
	})
	defer st.Close()
	base := "http://" + st.http.Addr()
	if !signedIn(t, base, consoleCookie([]byte(legacy[keys.Console]), consoleToken)) {
		t.Fatal("a console sign-in signed before the keys moved out of the store no longer signs in")
	}
	files := map[string]string{}
	for _, k := range keys.All {
		b, err := os.ReadFile(filepath.Join(dataDir, "keys", k.File))
		if err != nil {
			t.Fatal(err)
		}
		if v := strings.TrimSpace(string(b)); v != legacy[k] {
			t.Errorf("%s holds %q, want the key the store held", k.File, v)
		} else {
			files[k.File] = v
		}
	}

	// Something in every table of the log.
	session := connectAs(t, st.mcpURL(), "default-token-0123456789")
	tr, evs := transcriptEvents(t, "01_csv_import_gbk.json")
	if end := call[mcpserver.EndOutput](t, session, mcpserver.ToolEnd, map[string]any{"session_id": tr.SessionID, "events": evs, "wait": true}); end.Status != "completed" {
		t.Fatalf("session_end = %+v", end)
	}

	sql, err := clickhouse.Open(ctx, clickhouse.Config{Addr: []string{st.sqlAddr(t)}, Protocol: clickhouse.HTTP,
		Username: "hindsight", Password: readSQLToken(dataDir), SkipMigrate: true, DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer sql.Close()
	query := func(q string) (string, error) {
		var b bytes.Buffer
		err := sql.QueryReadOnly(ctx, q, &b, clickhouse.QueryOptions{Format: clickhouse.FormatJSON})
		return b.String(), err
	}
	settings, err := query("SELECT * FROM hindsight.settings")
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range files {
		if strings.Contains(settings, v) {
			t.Errorf("SELECT * FROM settings shows the key of %s", name)
		}
	}
	for _, k := range keys.All {
		if strings.Contains(settings, `"`+k.Setting+`"`) {
			t.Errorf("SELECT * FROM settings still has the row %s", k.Setting)
		}
	}

	// Everything SQL reads: every cell of every table, and whatever
	// ClickHouse's file functions reach of the key files.
	var readable []string
	tables, err := query("SELECT name FROM system.tables WHERE database = 'hindsight'")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range cells(t, tables) {
		out, err := query("SELECT * FROM hindsight.`" + name + "`")
		if err != nil {
			continue
		}
		readable = append(readable, cells(t, out)...)
	}
	for _, k := range keys.All {
		for _, path := range []string{filepath.Join(dataDir, "keys", k.File), "../keys/" + k.File, "../../keys/" + k.File} {
			out, err := query(fmt.Sprintf("SELECT * FROM file('%s', 'RawBLOB')", path))
			t.Logf("file(%s): %v", path, err)
			if err == nil {
				readable = append(readable, cells(t, out)...)
			}
		}
	}
	if len(readable) < 20 {
		t.Fatalf("SQL read %d values; the test reads too little to mean anything", len(readable))
	}
	for _, v := range readable {
		for _, key := range []string{v, strings.TrimSpace(v)} {
			if signedIn(t, base, consoleCookie([]byte(key), consoleToken)) {
				t.Fatalf("a value SQL can read signs a console cookie: %.12s…", key)
			}
		}
	}
	// The test can tell: the key file's key does sign in.
	if !signedIn(t, base, consoleCookie([]byte(files[keys.Console.File]), consoleToken)) {
		t.Fatal("the console key does not sign in: the forgery check above proves nothing")
	}
}

// cells returns every value of a query answer of JSON rows, as strings.
func cells(t *testing.T, out string) []string {
	t.Helper()
	var vs []string
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var row map[string]any
		if err := dec.Decode(&row); err != nil {
			t.Fatalf("%v: %.200s", err, out)
		}
		for _, v := range row {
			switch x := v.(type) {
			case string:
				vs = append(vs, x)
			default:
				b, _ := json.Marshal(x)
				vs = append(vs, string(b))
			}
		}
	}
	return vs
}
