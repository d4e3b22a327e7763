package mcpserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hindsight-memory/hindsight/auth"
)

// mcpHTTP is a raw streamable HTTP client: what curl sends, so that the
// test sees statuses and headers as the transport answers them.
type mcpHTTP struct {
	t   *testing.T
	url string
}

type answer struct {
	status  int
	session string
	body    string
}

func (c mcpHTTP) send(method, session, token, body string) answer {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	defer res.Body.Close()
	a := answer{status: res.StatusCode, session: res.Header.Get("Mcp-Session-Id")}
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(res.Body)
		a.body = string(b)
	}
	return a
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
const ping = `{"jsonrpc":"2.0","id":2,"method":"ping"}`

func (c mcpHTTP) open(token string) string {
	c.t.Helper()
	a := c.send(http.MethodPost, "", token, initialize)
	if a.status != http.StatusOK || a.session == "" {
		c.t.Fatalf("initialize: %d %q, session %q", a.status, a.body, a.session)
	}
	return a.session
}

func sessionServer(t *testing.T, tokens *auth.Tokens, sessions *Sessions) mcpHTTP {
	t.Helper()
	srv := httptest.NewServer(HTTPHandler(New(nil, Options{}), HTTPOptions{Path: "/mcp", Tokens: tokens, DefaultTenant: "acme", Sessions: sessions}))
	t.Cleanup(srv.Close)
	return mcpHTTP{t: t, url: srv.URL + "/mcp"}
}

func TestSessionsAsTheSpecificationSays(t *testing.T) {
	sessions := NewSessions([]byte("0123456789abcdef0123456789abcdef"))
	c := sessionServer(t, nil, sessions)
	id := c.open("")
	if !strings.HasPrefix(id, sessionPrefix) {
		t.Fatalf("session ID %q was not issued by Sessions", id)
	}
	ended := c.open("")
	if a := c.send(http.MethodDelete, ended, "", ""); a.status != http.StatusOK {
		t.Fatalf("DELETE of a live session: %d %s", a.status, a.body)
	}
	never := sessionPrefix + "AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAA"

	for _, c2 := range []struct {
		name, method, session, body string
		want                        int
		says                        string
	}{
		{"ping in a live session", http.MethodPost, id, ping, http.StatusOK, `"result"`},
		{"ping without a session", http.MethodPost, "", ping, http.StatusBadRequest, "missing Mcp-Session-Id"},
		{"ping in a session never issued", http.MethodPost, never, ping, http.StatusNotFound, "no such session"},
		{"ping with mcp-go's own ID format", http.MethodPost, "mcp-session-6f2c1f7e-4a8b-4d2e-9c3a-1b2c3d4e5f60", ping, http.StatusNotFound, "no such session"},
		{"ping in an ended session", http.MethodPost, ended, ping, http.StatusNotFound, "session ended"},
		{"GET without a session", http.MethodGet, "", "", http.StatusBadRequest, "missing Mcp-Session-Id"},
		{"GET in a session never issued", http.MethodGet, never, "", http.StatusNotFound, "no such session"},
		{"GET in an ended session", http.MethodGet, ended, "", http.StatusNotFound, "session ended"},
		{"DELETE without a session", http.MethodDelete, "", "", http.StatusBadRequest, "missing Mcp-Session-Id"},
		{"DELETE of a session never issued", http.MethodDelete, never, "", http.StatusNotFound, "no such session"},
		{"DELETE of an ended session", http.MethodDelete, ended, "", http.StatusNotFound, "session ended"},
		{"a batch", http.MethodPost, id, "[" + ping + "," + ping + "]", http.StatusBadRequest, "batches are not supported"},
		{"JSON 11,000 levels deep", http.MethodPost, id, `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":` + strings.Repeat("[", 11000) + strings.Repeat("]", 11000) + `}}`, http.StatusBadRequest, "nested too deeply (limit 64 levels)"},
		{"invalid JSON", http.MethodPost, id, `{"jsonrpc":`, http.StatusBadRequest, "not valid json"},
	} {
		a := c.send(c2.method, c2.session, "", c2.body)
		if a.status != c2.want || !strings.Contains(a.body, c2.says) {
			t.Errorf("%s: %d %q, want %d saying %q", c2.name, a.status, a.body, c2.want, c2.says)
		}
	}

	// A second server with the same key (a restart, another replica)
	// accepts the session; one with another key does not.
	if a := sessionServer(t, nil, sessions).send(http.MethodPost, id, "", ping); a.status != http.StatusOK {
		t.Errorf("the same key on another server: %d %s", a.status, a.body)
	}
	if a := sessionServer(t, nil, NewSessions([]byte("another key, another deployment"))).send(http.MethodPost, id, "", ping); a.status != http.StatusNotFound {
		t.Errorf("another key: %d %s, want 404", a.status, a.body)
	}
}

func TestSessionsBelongToTheirTenant(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(file, []byte("acme acme-token-0123456789\nglobex globex-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := auth.LoadTokens(file)
	if err != nil {
		t.Fatal(err)
	}
	c := sessionServer(t, tokens, NewSessions([]byte("0123456789abcdef0123456789abcdef")))
	id := c.open("acme-token-0123456789")
	if a := c.send(http.MethodPost, id, "acme-token-0123456789", ping); a.status != http.StatusOK {
		t.Fatalf("acme in its own session: %d %s", a.status, a.body)
	}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		if a := c.send(method, id, "globex-token-0123456789", ping); a.status != http.StatusNotFound {
			t.Errorf("%s by globex in acme's session: %d %s, want 404", method, a.status, a.body)
		}
	}
	if a := c.send(http.MethodPost, id, "acme-token-0123456789", ping); a.status != http.StatusOK {
		t.Fatalf("globex's attempts ended acme's session: %d %s", a.status, a.body)
	}
}

func TestNesting(t *testing.T) {
	for in, want := range map[string]int{
		`{}`:                   1,
		`{"a":[1,{"b":2}]}`:    3,
		`{"a":"[[[[{{{{"}`:     1,
		`{"a":"\"[[[","b":[]}`: 2,
		`"[["`:                 0,
	} {
		if got := nesting([]byte(in)); got != want {
			t.Errorf("nesting(%s) = %d, want %d", in, got, want)
		}
	}
}
