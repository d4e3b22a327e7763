package main

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hindsight-memory/hindsight/mcpserver"
)

// TestMCPEndpointStatelessWithoutSessions checks mcpMux's two shapes:
// without sessions (hindsight mcp) initialize issues no session ID and
// GET gets 405, so replicas need no affinity; with them (hindsight dev)
// initialize issues a signed session ID.
func TestMCPEndpointStatelessWithoutSessions(t *testing.T) {
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	for _, tc := range []struct {
		name     string
		sessions *mcpserver.Sessions
		session  func(string) bool
		get      int
	}{
		{"stateless", nil, func(id string) bool { return id == "" }, http.StatusMethodNotAllowed},
		{"sessions", mcpserver.NewSessions([]byte("0123456789abcdef0123456789abcdef")), func(id string) bool { return strings.HasPrefix(id, "hs1.") }, http.StatusBadRequest},
	} {
		srv := httptest.NewServer(mcpMux(mcpserver.New(nil, mcpserver.Options{}), nil, "acme", tc.sessions, http.NewServeMux(), nil))
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if id := res.Header.Get("Mcp-Session-Id"); res.StatusCode != http.StatusOK || !tc.session(id) {
			t.Errorf("%s: initialize = %d with session ID %q", tc.name, res.StatusCode, id)
		}
		res, err = http.Get(srv.URL + "/mcp")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.get {
			t.Errorf("%s: GET without a session = %d, want %d", tc.name, res.StatusCode, tc.get)
		}
		srv.Close()
	}
}

// TestClickHouseClusterFromTheEnvironment: CLICKHOUSE_CLUSTER reaches the
// store's configuration with a server, and is refused without one.
func TestClickHouseClusterFromTheEnvironment(t *testing.T) {
	s := stackFlags{dataDir: t.TempDir()}
	t.Setenv("CLICKHOUSE_CLUSTER", "prod")
	t.Setenv("CLICKHOUSE_ADDR", "")
	if _, err := s.workerConfig(slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "needs CLICKHOUSE_ADDR") {
		t.Errorf("CLICKHOUSE_CLUSTER without a server: %v", err)
	}
	t.Setenv("CLICKHOUSE_ADDR", "ch-0:9000,ch-1:9000")
	cfg, err := s.workerConfig(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClickHouse == nil || cfg.ClickHouse.Cluster != "prod" {
		t.Errorf("CLICKHOUSE_CLUSTER=prod gave the store %+v", cfg.ClickHouse)
	}
}
