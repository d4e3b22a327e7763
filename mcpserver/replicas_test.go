package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/service"
)

// sharedLog is a Backend over one in-memory log that every replica of a
// test uses, standing for the ClickHouse and Milvus that replicas share:
// memory_log appends to it, memory_stats counts it.
type sharedLog struct {
	Backend
	mu     sync.Mutex
	events []memory.Event
}

func (b *sharedLog) Log(_ context.Context, tenant string, r service.LogRequest) (memory.Event, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := memory.Event{ID: fmt.Sprintf("e%d", len(b.events)+1), Tenant: tenant, SessionID: r.SessionID, Content: r.Content}
	b.events = append(b.events, e)
	return e, nil
}

func (b *sharedLog) Stats(_ context.Context, tenant string) (service.Stats, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return service.Stats{Tenant: tenant, Memories: len(b.events)}, nil
}

// replica is one MCP server process: its own mcp-go server and transport,
// counting the JSON-RPC methods it served.
type replica struct {
	srv     *httptest.Server
	mu      sync.Mutex
	methods map[string]int
}

func startReplica(t *testing.T, b Backend, o HTTPOptions) *replica {
	t.Helper()
	r := &replica{methods: map[string]int{}}
	h := HTTPHandler(New(b, Options{}), o)
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		r.mu.Lock()
		r.methods[req.Method+" "+m.Method]++
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *replica) served(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.methods[key]
}

// roundRobin is a load balancer without affinity: each request goes to
// the next replica, whatever it carries.
type roundRobin struct {
	replicas []*replica
	mu       sync.Mutex
	n        int
	sessions []string // Mcp-Session-Id of every response
}

func (lb *roundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	lb.mu.Lock()
	r := lb.replicas[lb.n%len(lb.replicas)]
	lb.n++
	lb.mu.Unlock()
	u, _ := url.Parse(r.srv.URL)
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host, out.Host = u.Scheme, u.Host, ""
	res, err := http.DefaultTransport.RoundTrip(out)
	if err == nil {
		lb.mu.Lock()
		lb.sessions = append(lb.sessions, res.Header.Get("Mcp-Session-Id"))
		lb.mu.Unlock()
	}
	return res, err
}

// connectThrough connects the official Go SDK's client through lb,
// speaking protocol version (the SDK's latest when "").
func connectThrough(t *testing.T, lb *roundRobin, version string) (*sdk.ClientSession, error) {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "replicas-test", Version: "test"}, nil)
	return c.Connect(context.Background(), &sdk.StreamableClientTransport{
		Endpoint: "http://hindsight.invalid/mcp", HTTPClient: &http.Client{Transport: lb}, DisableStandaloneSSE: true, MaxRetries: -1,
	}, &sdk.ClientSessionOptions{ProtocolVersion: version})
}

// legacyProtocol is the last protocol version with sessions, which most
// clients in the field speak; 2026-07-28 and later have none.
const legacyProtocol = "2025-11-25"

// TestAnyReplicaAnswersAnyRequest runs two replicas of the stateless MCP
// server over one shared backend behind a round-robin balancer: one client
// initializes once and then each of its calls lands on the other replica
// than the one before, and every call is answered, in the one session,
// without initializing again. It runs with a client of protocol
// 2025-11-25, which has sessions, and of the SDK's latest, which has none
// (server/discover instead of initialize).
func TestAnyReplicaAnswersAnyRequest(t *testing.T) {
	for _, version := range []string{legacyProtocol, ""} {
		t.Run(cmp.Or(version, "latest"), func(t *testing.T) { anyReplicaAnswers(t, version) })
	}
}

func anyReplicaAnswers(t *testing.T, version string) {
	ctx := context.Background()
	b := &sharedLog{}
	o := HTTPOptions{Path: "/mcp", DefaultTenant: "acme", Stateless: true}
	lb := &roundRobin{replicas: []*replica{startReplica(t, b, o), startReplica(t, b, o)}}
	s, err := connectThrough(t, lb, version)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer s.Close()

	const calls = 6
	for i := range calls {
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: ToolLog, Arguments: map[string]any{
			"session_id": "s1", "role": "user", "content": fmt.Sprintf("step %d", i)}})
		if err != nil || res.IsError {
			t.Fatalf("call %d: %v %+v", i, err, res)
		}
	}
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: ToolStats})
	if err != nil || res.IsError {
		t.Fatalf("memory_stats: %v %+v", err, res)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var st service.Stats
	if err := json.Unmarshal(raw, &st); err != nil || st.Memories != calls {
		t.Errorf("memory_stats after %d calls over two replicas = %s (%v): want the shared store's %d", calls, raw, err, calls)
	}

	inits := 0
	for i, r := range lb.replicas {
		inits += r.served("POST initialize") + r.served("POST server/discover")
		if n := r.served("POST tools/call"); n < calls/2 {
			t.Errorf("replica %d answered %d of the %d tool calls: the balancer did not spread them", i, n, calls+1)
		}
	}
	if inits != 1 {
		t.Errorf("the client initialized %d times, want once", inits)
	}
	for _, id := range lb.sessions {
		if id != "" {
			t.Errorf("a stateless replica issued session ID %q", id)
		}
	}
}

// TestReplicasWithSessionsNeedAffinity is the control of the test above:
// replicas that keep sessions each with a key of their own (what
// HTTPOptions.Sessions nil means) refuse a session the other issued, so
// the balancer above really sends calls to both and would catch state
// kept in one replica.
func TestReplicasWithSessionsNeedAffinity(t *testing.T) {
	b := &sharedLog{}
	o := HTTPOptions{Path: "/mcp", DefaultTenant: "acme"}
	lb := &roundRobin{replicas: []*replica{startReplica(t, b, o), startReplica(t, b, o)}}
	s, err := connectThrough(t, lb, legacyProtocol)
	if err == nil {
		// initialize went to one replica and notifications/initialized to
		// the other; the go-sdk client may not wait for the latter.
		defer s.Close()
		_, err = s.CallTool(context.Background(), &sdk.CallToolParams{Name: ToolStats})
	}
	if err == nil {
		t.Fatal("a session issued by one replica was accepted by the other, which has its own key: the balancer does not reach both")
	}
}

// TestStatelessAsTheSpecificationAllows checks the stateless transport at
// the HTTP level: no session ID is issued or required, one a client still
// sends is ignored, GET and DELETE get 405 with Allow: POST, and the body
// checks still hold.
func TestStatelessAsTheSpecificationAllows(t *testing.T) {
	srv := httptest.NewServer(HTTPHandler(New(nil, Options{}), HTTPOptions{Path: "/mcp", DefaultTenant: "acme", Stateless: true,
		Sessions: NewSessions([]byte("ignored when stateless, 32 bytes."))}))
	t.Cleanup(srv.Close)
	c := mcpHTTP{t: t, url: srv.URL + "/mcp"}
	if a := c.send(http.MethodPost, "", "", initialize); a.status != http.StatusOK || a.session != "" {
		t.Fatalf("initialize: %d, session %q; want 200 and no session ID", a.status, a.session)
	}
	for _, tc := range []struct {
		name, method, session, body string
		want                        int
		says                        string
	}{
		{"ping without a session", http.MethodPost, "", ping, http.StatusOK, `"result"`},
		{"ping with a session ID from before", http.MethodPost, sessionPrefix + "AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAA", ping, http.StatusOK, `"result"`},
		{"GET", http.MethodGet, "", "", http.StatusMethodNotAllowed, "no stream to open"},
		{"DELETE", http.MethodDelete, "any", "", http.StatusMethodNotAllowed, "no session to end"},
		{"a batch", http.MethodPost, "", "[" + ping + "," + ping + "]", http.StatusBadRequest, "batches are not supported"},
		{"JSON 100 levels deep", http.MethodPost, "", `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}`, http.StatusBadRequest, "nested too deeply"},
	} {
		a := c.send(tc.method, tc.session, "", tc.body)
		if a.status != tc.want || !strings.Contains(a.body, tc.says) {
			t.Errorf("%s: %d %q, want %d saying %q", tc.name, a.status, a.body, tc.want, tc.says)
		}
		if a.session != "" {
			t.Errorf("%s: answered with session ID %q", tc.name, a.session)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, c.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != http.MethodPost {
		t.Errorf("GET for a stream: %d, Allow %q; want 405 and Allow: POST", res.StatusCode, res.Header.Get("Allow"))
	}
}
