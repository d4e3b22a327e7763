package main

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/hindsight-memory/hindsight/httpguard"
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

// sqlGuard is the Host policy of the SQL endpoint: its own loopback
// address only, whatever HINDSIGHT_ALLOWED_HOSTS says (no proxy or other
// name ever serves it).
func sqlGuard(addr string) (*httpguard.Policy, error) {
	return httpguard.New(httpguard.Config{Listen: addr})
}

// guardSQL serves the embedded ClickHouse's read-only HTTP interface
// (chdb.Store.ReadOnlyHandler) to hindsight sql and export only: a request
// from a browser (any Origin) or without the run's token is refused
// before it reaches the engine; the listener refuses another Host
// (sqlGuard), and the engine what is not one read of the database.
func guardSQL(next http.Handler, token string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, sent := r.Header["Origin"]; sent {
			http.Error(w, "forbidden: this endpoint serves hindsight sql, not browsers", http.StatusForbidden)
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
		next.ServeHTTP(w, r)
	})
}
