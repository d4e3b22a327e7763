package mcpserver

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/hindsight-memory/hindsight/auth"
)

// SessionKeySetting names, in the store's settings, the key that signs MCP
// session IDs, so that every replica and every restart accepts the IDs any
// of them issued.
const SessionKeySetting = "mcp.session.key"

// MaxNesting is how deeply a request's JSON may nest. Tool arguments are
// flat records; anything deeper is refused before it is decoded.
const MaxNesting = 64

// MaxRequestBytes bounds one HTTP request body. The largest argument a
// tool takes (session_end's events) is bounded well below it
// (memory.MaxEvents and the field limits).
const MaxRequestBytes = 32 << 20

// Sessions issues and checks the MCP session IDs of streamable HTTP
// (protocol versions up to 2025-11-25; 2026-07-28 has no sessions). An ID
// is a random part and an HMAC of it with the caller's tenant, so it is
// valid only for the tenant it was issued to, and on any replica that
// shares the key, without a shared table. A session the client ended with
// DELETE stays ended in this process until the ID expires.
//
// mark3labs/mcp-go, left to itself, issues IDs it never checks: any
// well-formed ID is accepted, DELETE ends nothing, and GET with a bogus ID
// opens a stream. sessionGate and the manager below replace that.
type Sessions struct {
	key []byte
	// ttl is how long an ID stays valid after it was issued.
	ttl time.Duration
	now func() time.Time

	mu    sync.Mutex
	ended map[string]time.Time // ended IDs, and when they expire anyway
}

// NewSessions returns session IDs signed with key.
func NewSessions(key []byte) *Sessions {
	return &Sessions{key: key, ttl: 30 * 24 * time.Hour, now: time.Now, ended: map[string]time.Time{}}
}

const sessionPrefix = "hs1."

// issue returns a new session ID for tenant.
func (s *Sessions) issue(tenant string) string {
	var r [16]byte
	_, _ = rand.Read(r[:])
	body := base64.RawURLEncoding.EncodeToString(r[:]) + "." + base64.RawURLEncoding.EncodeToString(binaryTime(s.now().Add(s.ttl)))
	return sessionPrefix + body + "." + s.sign(tenant, body)
}

func (s *Sessions) sign(tenant, body string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(tenant))
	m.Write([]byte{0})
	m.Write([]byte(body))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:18])
}

// Session check results.
var (
	errNoSession      = errors.New("no such session")
	errSessionExpired = errors.New("session expired")
)

// check reports whether id is a live session of tenant: errNoSession for
// an ID this deployment never issued to tenant, errSessionExpired for one
// past its time, ended for one the client ended.
func (s *Sessions) check(tenant, id string) (ended bool, err error) {
	rest, ok := strings.CutPrefix(id, sessionPrefix)
	if !ok {
		return false, errNoSession
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 || !hmac.Equal([]byte(rest[i+1:]), []byte(s.sign(tenant, rest[:i]))) {
		return false, errNoSession
	}
	_, exp, _ := strings.Cut(rest[:i], ".")
	raw, err := base64.RawURLEncoding.DecodeString(exp)
	if err != nil || len(raw) != 8 {
		return false, errNoSession
	}
	if s.now().After(fromBinaryTime(raw)) {
		return false, errSessionExpired
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ended = s.ended[id]
	return ended, nil
}

// end marks id ended, and forgets ended IDs that have expired anyway.
func (s *Sessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for k, exp := range s.ended {
		if now.After(exp) {
			delete(s.ended, k)
		}
	}
	s.ended[id] = now.Add(s.ttl)
}

func binaryTime(t time.Time) []byte {
	b := make([]byte, 8)
	u := uint64(t.Unix())
	for i := range 8 {
		b[7-i] = byte(u >> (8 * i))
	}
	return b
}

func fromBinaryTime(b []byte) time.Time {
	var u uint64
	for _, c := range b {
		u = u<<8 | uint64(c)
	}
	return time.Unix(int64(u), 0)
}

// resolver gives mcp-go a session manager bound to the request's tenant.
type sessionResolver struct{ s *Sessions }

func (r sessionResolver) ResolveSessionIdManager(req *http.Request) server.SessionIdManager {
	tenant := ""
	if req != nil {
		tenant = auth.TenantFrom(req.Context())
	}
	return tenantSessions{s: r.s, tenant: tenant}
}

type tenantSessions struct {
	s      *Sessions
	tenant string
}

func (t tenantSessions) Generate() string { return t.s.issue(t.tenant) }

func (t tenantSessions) Validate(id string) (bool, error) { return t.s.check(t.tenant, id) }

func (t tenantSessions) Terminate(id string) (bool, error) {
	if _, err := t.s.check(t.tenant, id); err != nil {
		return false, err
	}
	t.s.end(id)
	return false, nil
}

// sessionGate answers, before mcp-go sees them, the requests the MCP
// transport specification (2025-11-25) says a server must refuse, with the
// status it prescribes and a message that says what to do:
//   - a request without Mcp-Session-Id other than initialize: 400;
//   - an unknown, expired or ended session on POST, GET or DELETE: 404,
//     which tells the client to initialize a new session;
//   - a JSON-RPC batch (removed from MCP in 2025-06-18): "batches are not
//     supported", where mcp-go would call the valid JSON invalid;
//   - JSON nested deeper than MaxNesting: "nested too deeply", where
//     encoding/json would fail at 10,000 levels with "not valid json";
//   - a body over MaxRequestBytes: 413.
//
// Requests of protocol 2026-07-28 and later, which has no sessions, pass
// to mcp-go unchanged but for the body checks, and subscriptions/listen,
// which is Method not found: Hindsight sends no notifications.
//
// With s nil (HTTPOptions.Stateless) there are no sessions to check: any
// POST passes (its Mcp-Session-Id, if any, is ignored), and GET and DELETE
// get 405, which tells the client that the server offers no stream and no
// session to end, as the specification allows.
func sessionGate(next http.Handler, s *Sessions) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Method == http.MethodPost {
			var err error
			body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
			if err != nil {
				var tooBig *http.MaxBytesError
				if errors.As(err, &tooBig) {
					http.Error(w, fmt.Sprintf("request body too large: at most %d MiB; send long transcripts with memory_log in parts", MaxRequestBytes>>20), http.StatusRequestEntityTooLarge)
					return
				}
				http.Error(w, "could not read the request body: "+err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			trimmed := bytes.TrimLeft(body, " \t\r\n")
			if len(trimmed) > 0 && trimmed[0] == '[' && json.Valid(trimmed) {
				writeRPCError(w, http.StatusBadRequest, mcp.INVALID_REQUEST,
					"batches are not supported: JSON-RPC batching was removed from MCP in protocol version 2025-06-18; send one message per request")
				return
			}
			if depth := nesting(body); depth > MaxNesting {
				writeRPCError(w, http.StatusBadRequest, mcp.PARSE_ERROR,
					fmt.Sprintf("request JSON is nested too deeply (limit %d levels)", MaxNesting))
				return
			}
		}
		method, metaVersion := peek(body)
		if mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) || mcp.IsModernProtocol(metaVersion) {
			if method == string(mcp.MethodSubscriptionsListen) {
				// Hindsight declares no listChanged or subscribe capability:
				// it has no notification to deliver, so it offers no
				// subscription stream (mcp-go would open one and close it
				// at once, its acknowledgement racing the result).
				var m struct {
					ID json.RawMessage `json:"id"`
				}
				_ = json.Unmarshal(body, &m)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{
					"code": mcp.METHOD_NOT_FOUND, "message": "subscriptions/listen: this server sends no notifications (it declares no listChanged or subscribe capability)"}})
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if s == nil {
			switch r.Method {
			case http.MethodGet, http.MethodDelete:
				w.Header().Set("Allow", http.MethodPost)
				http.Error(w, "this server keeps no sessions: every request stands alone, so there is no stream to open and no session to end; send requests with POST", http.StatusMethodNotAllowed)
			default:
				next.ServeHTTP(w, r)
			}
			return
		}
		id := r.Header.Get(server.HeaderKeySessionID)
		switch r.Method {
		case http.MethodPost:
			if id == "" && method != string(mcp.MethodInitialize) {
				writeRPCError(w, http.StatusBadRequest, mcp.INVALID_REQUEST,
					"missing Mcp-Session-Id header: send initialize first, then the session ID it returns with every request")
				return
			}
		case http.MethodGet, http.MethodDelete:
			if id == "" {
				http.Error(w, "missing Mcp-Session-Id header: "+r.Method+" needs the session ID that initialize returned", http.StatusBadRequest)
				return
			}
		default:
			next.ServeHTTP(w, r)
			return
		}
		if id == "" {
			next.ServeHTTP(w, r)
			return
		}
		ended, err := s.check(auth.TenantFrom(r.Context()), id)
		switch {
		case errors.Is(err, errSessionExpired):
			http.Error(w, "session expired: initialize a new session", http.StatusNotFound)
		case err != nil:
			http.Error(w, "no such session: initialize a new session", http.StatusNotFound)
		case ended:
			http.Error(w, "session ended: initialize a new session", http.StatusNotFound)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// peek reads what the gate needs of a POST body, in one decoding: the
// method (initialize is the one message sent without a session) and the
// protocol version its _meta names (2026-07-28 and later have no
// sessions, as mcp-go decides it).
func peek(body []byte) (method, metaVersion string) {
	var m struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if len(body) == 0 || json.Unmarshal(body, &m) != nil {
		return "", ""
	}
	// A malformed params or _meta names no version.
	var p struct {
		Meta *mcp.Meta `json:"_meta"`
	}
	var meta *mcp.Meta
	if len(m.Params) > 0 && json.Unmarshal(m.Params, &p) == nil {
		meta = p.Meta
	}
	return m.Method, meta.ProtocolVersion()
}

// nesting is the deepest nesting of arrays and objects in a JSON text,
// counted without decoding it.
func nesting(b []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

func writeRPCError(w http.ResponseWriter, status, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": code, "message": message},
	})
}
