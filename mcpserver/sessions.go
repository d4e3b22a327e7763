package mcpserver

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
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

// EndedSessionPrefix names, in the store's settings, the sessions a
// client ended: the key is this and the ID's random part, the value when
// the ID expires anyway (Unix seconds).
const EndedSessionPrefix = "mcp.session.ended."

// Sessions issues and checks the MCP session IDs of streamable HTTP
// (protocol versions up to 2025-11-25; 2026-07-28 has no sessions). An ID
// is a random part, its expiry, and an HMAC of both with the caller's
// tenant and user, so it is valid only for the tenant and the user of the
// token that opened it, and on any replica that shares the key, without a
// shared table. A session the client ended with DELETE stays ended until
// the ID expires: in this process, and, with a store (Persist), after a
// restart and on every process that shares the store.
//
// mark3labs/mcp-go, left to itself, issues IDs it never checks: any
// well-formed ID is accepted, DELETE ends nothing, and GET with a bogus ID
// opens a stream. sessionGate and the manager below replace that.
type Sessions struct {
	key []byte
	// ttl is how long an ID stays valid after it was issued.
	ttl time.Duration
	now func() time.Time
	// store keeps the ended IDs (nil: this process only).
	store Settings

	mu    sync.Mutex
	ended map[string]time.Time // ended IDs, and when they expire anyway
	// live are IDs the store said were not ended: each is asked once.
	live map[string]bool
}

// NewSessions returns session IDs signed with key.
func NewSessions(key []byte) *Sessions {
	return &Sessions{key: key, ttl: 30 * 24 * time.Hour, now: time.Now, ended: map[string]time.Time{}, live: map[string]bool{}}
}

// Persist keeps the sessions clients end in store, so that an ended
// session stays ended after a restart.
func (s *Sessions) Persist(store Settings) *Sessions {
	s.store = store
	return s
}

// Settings is where ended sessions are kept: the episodic store's
// deployment-wide settings, which every replica reads.
type Settings interface {
	Setting(ctx context.Context, key string) (string, error)
	PutSetting(ctx context.Context, key, value string) error
}

const sessionPrefix = "hs1."

// maxLive bounds the IDs remembered as not ended; past it they are asked
// of the store again.
const maxLive = 10000

// issue returns a new session ID for tenant and user.
func (s *Sessions) issue(tenant, user string) string {
	var r [16]byte
	_, _ = rand.Read(r[:])
	body := base64.RawURLEncoding.EncodeToString(r[:]) + "." + base64.RawURLEncoding.EncodeToString(binaryTime(s.now().Add(s.ttl)))
	return sessionPrefix + body + "." + s.sign(tenant, user, body)
}

func (s *Sessions) sign(tenant, user, body string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(tenant))
	m.Write([]byte{0})
	m.Write([]byte(user))
	m.Write([]byte{0})
	m.Write([]byte(body))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:18])
}

// Session check results.
var (
	errNoSession      = errors.New("no such session")
	errSessionExpired = errors.New("session expired")
)

// check reports whether id is a live session of tenant and user:
// errNoSession for an ID this deployment never issued to them,
// errSessionExpired for one past its time, ended for one a client ended.
func (s *Sessions) check(ctx context.Context, tenant, user, id string) (ended bool, err error) {
	random, exp, err := s.parse(tenant, user, id)
	if err != nil {
		return false, err
	}
	if s.now().After(exp) {
		return false, errSessionExpired
	}
	s.mu.Lock()
	_, ended = s.ended[id]
	asked := s.live[id]
	s.mu.Unlock()
	if ended || asked || s.store == nil {
		return ended, nil
	}
	v, err := s.store.Setting(ctx, EndedSessionPrefix+random)
	if err != nil {
		return false, fmt.Errorf("read whether session %s ended: %w", random, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v != "" {
		s.ended[id] = exp
		return true, nil
	}
	if len(s.live) >= maxLive {
		clear(s.live)
	}
	s.live[id] = true
	return false, nil
}

// parse checks id's signature for tenant and user, and returns its random
// part and expiry.
func (s *Sessions) parse(tenant, user, id string) (string, time.Time, error) {
	rest, ok := strings.CutPrefix(id, sessionPrefix)
	if !ok {
		return "", time.Time{}, errNoSession
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 || !hmac.Equal([]byte(rest[i+1:]), []byte(s.sign(tenant, user, rest[:i]))) {
		return "", time.Time{}, errNoSession
	}
	random, exp, _ := strings.Cut(rest[:i], ".")
	raw, err := base64.RawURLEncoding.DecodeString(exp)
	if err != nil || len(raw) != 8 {
		return "", time.Time{}, errNoSession
	}
	return random, fromBinaryTime(raw), nil
}

// end marks id (of tenant and user) ended, in the store when there is
// one, and forgets ended IDs that have expired anyway.
func (s *Sessions) end(ctx context.Context, tenant, user, id string) error {
	random, exp, err := s.parse(tenant, user, id)
	if err != nil {
		return err
	}
	if s.store != nil {
		if err := s.store.PutSetting(ctx, EndedSessionPrefix+random, fmt.Sprint(exp.Unix())); err != nil {
			return fmt.Errorf("record that session %s ended: %w", random, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for k, e := range s.ended {
		if now.After(e) {
			delete(s.ended, k)
		}
	}
	s.ended[id] = exp
	delete(s.live, id)
	return nil
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

// resolver gives mcp-go a session manager bound to the request's tenant
// and user.
type sessionResolver struct{ s *Sessions }

func (r sessionResolver) ResolveSessionIdManager(req *http.Request) server.SessionIdManager {
	var id auth.Identity
	ctx := context.Background()
	if req != nil {
		id, _ = auth.From(req.Context())
		ctx = req.Context()
	}
	return callerSessions{s: r.s, ctx: ctx, tenant: id.Tenant, user: id.UserID}
}

type callerSessions struct {
	s            *Sessions
	ctx          context.Context
	tenant, user string
}

func (c callerSessions) Generate() string { return c.s.issue(c.tenant, c.user) }

func (c callerSessions) Validate(id string) (bool, error) {
	return c.s.check(c.ctx, c.tenant, c.user, id)
}

func (c callerSessions) Terminate(id string) (bool, error) {
	if _, err := c.s.check(c.ctx, c.tenant, c.user, id); err != nil {
		return false, err
	}
	return false, c.s.end(c.ctx, c.tenant, c.user, id)
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
//   - a body over MaxRequestBytes: 413;
//   - a method other than POST, GET and DELETE: 405, and a GET that does
//     not accept an event stream (Accept without text/event-stream): 406,
//     where mcp-go would open a stream anyway.
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
		switch r.Method {
		case http.MethodPost, http.MethodGet, http.MethodDelete:
		default:
			w.Header().Set("Allow", "GET, POST, DELETE")
			http.Error(w, r.Method+" is not a method of the MCP endpoint: send messages with POST, open a stream with GET, end a session with DELETE", http.StatusMethodNotAllowed)
			return
		}
		if r.Method == http.MethodGet && s != nil && !acceptsEventStream(r.Header.Values("Accept")) {
			http.Error(w, "GET opens an event stream: send Accept: text/event-stream", http.StatusNotAcceptable)
			return
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
		caller, _ := auth.From(r.Context())
		ended, err := s.check(r.Context(), caller.Tenant, caller.UserID, id)
		switch {
		case errors.Is(err, errSessionExpired):
			http.Error(w, "session expired: initialize a new session", http.StatusNotFound)
		case errors.Is(err, errNoSession):
			http.Error(w, "no such session: initialize a new session", http.StatusNotFound)
		case err != nil:
			http.Error(w, "could not check the session, retrying may help: "+err.Error(), http.StatusServiceUnavailable)
		case ended:
			http.Error(w, "session ended: initialize a new session", http.StatusNotFound)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// acceptsEventStream reports whether Accept headers admit
// text/event-stream (a missing header admits anything).
func acceptsEventStream(values []string) bool {
	if len(values) == 0 {
		return true
	}
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			media, params, _ := strings.Cut(part, ";")
			media = strings.ToLower(strings.TrimSpace(media))
			if media != "text/event-stream" && media != "text/*" && media != "*/*" {
				continue
			}
			refused := false
			for p := range strings.SplitSeq(params, ";") {
				if k, q, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "q") {
					f, err := strconv.ParseFloat(strings.TrimSpace(q), 64)
					refused = err == nil && f == 0
				}
			}
			if !refused {
				return true
			}
		}
	}
	return false
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
