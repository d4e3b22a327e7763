package main

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/hindsight-memory/hindsight/store/clickhouse/chdb"
)

// sqlTokenFile is where hindsight dev keeps the token of its loopback
// ClickHouse endpoint, in the data directory, readable by its user only.
const sqlTokenFile = "clickhouse-http.token"

// newSQLToken makes the endpoint's token for this run and writes it where
// hindsight sql and export find it.
func newSQLToken(dataDir string) (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(b)
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", err
	}
	return tok, os.WriteFile(filepath.Join(dataDir, sqlTokenFile), []byte(tok+"\n"), 0o600)
}

// readSQLToken reads the token a running hindsight dev wrote ("" when
// there is none).
func readSQLToken(dataDir string) string {
	b, err := os.ReadFile(filepath.Join(dataDir, sqlTokenFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// guardSQL serves the embedded ClickHouse's HTTP interface to hindsight
// sql and export only, and only for reading: a request from a browser
// (any Origin), for another host (DNS rebinding), without the run's token,
// or with a statement other than SELECT, SHOW, DESCRIBE, EXPLAIN or EXISTS
// is refused before it reaches the engine.
func guardSQL(next http.Handler, addr, token string) http.Handler {
	_, port, _ := net.SplitHostPort(addr)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" {
			http.Error(w, "forbidden: this endpoint serves hindsight sql, not browsers", http.StatusForbidden)
			return
		}
		host, hport, err := net.SplitHostPort(r.Host)
		if err != nil || hport != port || (host != "127.0.0.1" && host != "localhost" && host != "::1") {
			http.Error(w, "forbidden: this endpoint answers only for "+addr, http.StatusForbidden)
			return
		}
		key := r.Header.Get("X-ClickHouse-Key")
		if _, pass, ok := r.BasicAuth(); ok {
			key = pass
		}
		if subtle.ConstantTimeCompare([]byte(key), []byte(token)) != 1 {
			http.Error(w, "unauthorized: hindsight sql reads the token from the data directory ("+sqlTokenFile+")", http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/ping" {
			next.ServeHTTP(w, r)
			return
		}
		stmt := r.URL.Query().Get("query")
		if stmt == "" && r.Body != nil {
			body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			if err != nil {
				http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			stmt = string(body)
		}
		if !chdb.ReadOnly(stmt) {
			http.Error(w, "forbidden: this endpoint is read-only: SELECT, SHOW, DESCRIBE, EXPLAIN and EXISTS only", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
