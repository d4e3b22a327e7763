package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/store/clickhouse"
)

// TestDevSQLEndpointRefusesAttacks sends the attacks a web page can make on
// hindsight dev's loopback ClickHouse endpoint (a cross-origin POST, DNS
// rebinding with another Host, no credential) and those of a holder of the
// token (a write, behind nested comments too, a file read, INTO OUTFILE),
// and expects each refused and nothing created; hindsight sql's own reads,
// with the token from the data directory, still work.
func TestDevSQLEndpointRefusesAttacks(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	st := startTestDevWith(t, dataDir, func(o *devOptions) { o.clickhouseHTTP = "127.0.0.1:0" })
	defer st.Close()
	addr := st.sqlAddr(t)
	_, sqlPort, _ := net.SplitHostPort(addr)
	token := readSQLToken(dataDir)
	if token == "" {
		t.Fatal("hindsight dev wrote no token for its SQL endpoint")
	}
	create := "CREATE TABLE hindsight.pwn (x UInt8) ENGINE = Memory"
	for name, c := range map[string]struct {
		header map[string]string
		host   string
		body   string
		want   int
	}{
		"cross-origin page":    {header: map[string]string{"Origin": "http://evil.example", "X-ClickHouse-Key": token}, body: create, want: http.StatusForbidden},
		"DNS rebinding":        {header: map[string]string{"X-ClickHouse-Key": token}, host: "evil.example:" + sqlPort, body: create, want: http.StatusMisdirectedRequest},
		"no credential":        {body: create, want: http.StatusUnauthorized},
		"wrong credential":     {header: map[string]string{"X-ClickHouse-Key": "guess"}, body: "SELECT 1", want: http.StatusUnauthorized},
		"a write":              {header: map[string]string{"X-ClickHouse-Key": token}, body: create, want: http.StatusForbidden},
		"a write after a read": {header: map[string]string{"X-ClickHouse-Key": token}, body: "SELECT 1; DROP TABLE hindsight.events", want: http.StatusForbidden},
		"a commented write":    {header: map[string]string{"X-ClickHouse-Key": token}, body: "/* SELECT */ DROP TABLE hindsight.events", want: http.StatusForbidden},
		// The endpoint is chdb's read-only handler: each bypass found
		// against it is refused (TestReadOnlyHandlerRefusesEveryBypass).
		"a write behind nested comments": {header: map[string]string{"X-ClickHouse-Key": token}, body: "/* /* */ SELECT */ " + create, want: http.StatusForbidden},
		"a file read":                    {header: map[string]string{"X-ClickHouse-Key": token}, body: "SELECT file('/etc/passwd')", want: http.StatusForbidden},
		"INTO OUTFILE":                   {header: map[string]string{"X-ClickHouse-Key": token}, body: "SELECT 1 INTO OUTFILE '" + filepath.Join(dataDir, "out") + "'", want: http.StatusForbidden},
	} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader(c.body))
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		if c.host != "" {
			req.Host = c.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", name, resp.StatusCode, c.want)
		}
	}

	// hindsight sql's way in still reads, and nothing was created.
	client, err := clickhouse.Open(context.Background(), clickhouse.Config{Addr: []string{addr}, Protocol: clickhouse.HTTP,
		Username: "hindsight", Password: token, SkipMigrate: true, DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	var b bytes.Buffer
	if err := client.QueryReadOnly(context.Background(), "EXISTS TABLE hindsight.pwn", &b, clickhouse.QueryOptions{Format: clickhouse.FormatTSV}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(strings.TrimSpace(b.String()), "0") {
		t.Fatalf("the attack created a table: %q", b.String())
	}
}
