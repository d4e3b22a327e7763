package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	mcpserver_ "github.com/mark3labs/mcp-go/server"
	"go.temporal.io/sdk/client"

	"github.com/hindsight-memory/hindsight/app"
	"github.com/hindsight-memory/hindsight/auth"
	"github.com/hindsight-memory/hindsight/console"
	"github.com/hindsight-memory/hindsight/httpguard"
	"github.com/hindsight-memory/hindsight/keys"
	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/metrics"
	"github.com/hindsight-memory/hindsight/service"
)

// checkListen refuses to serve tenants' memories beyond this machine
// without credentials: without a token file, the MCP server listens on
// loopback only.
func checkListen(addr, tokensFile string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if tokensFile != "" {
		return nil
	}
	ip := net.ParseIP(host)
	if host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return fmt.Errorf("refusing to listen on %s without a token file: tenants come from credentials on HTTP; set --tokens-file (HINDSIGHT_TOKENS_FILE) or listen on 127.0.0.1", addr)
}

// loadTokens reads the tokens file, which is read again whenever it
// changes: a token removed from it stops working at once, on /mcp and in
// the console.
func loadTokens(path string, log *slog.Logger) (*auth.Tokens, error) {
	if path == "" {
		return nil, nil
	}
	t, err := auth.LoadTokens(path)
	if err != nil {
		return nil, err
	}
	return t.WithLogger(log), nil
}

// guardFor is the policy of a listener bound to addr (its real address):
// the Hosts it answers for and the browser origins it serves, from its
// address and HINDSIGHT_ALLOWED_HOSTS, HINDSIGHT_ALLOWED_ORIGINS and
// HINDSIGHT_TRUSTED_PROXIES (package httpguard).
func guardFor(addr string, origins ...string) (*httpguard.Policy, error) {
	return httpguard.New(httpguard.Config{
		Listen:         addr,
		Hosts:          httpguard.List(os.Getenv("HINDSIGHT_ALLOWED_HOSTS")),
		Origins:        append(httpguard.List(os.Getenv("HINDSIGHT_ALLOWED_ORIGINS")), origins...),
		TrustedProxies: httpguard.List(os.Getenv("HINDSIGHT_TRUSTED_PROXIES")),
	})
}

// readiness reports whether the service can do its work: Temporal answers
// and the episodic store answers.
type readiness struct {
	temporal client.Client
	store    memory.EpisodicStore
}

func (r readiness) check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if r.temporal != nil {
		if _, err := r.temporal.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
			return fmt.Errorf("temporal: %w", err)
		}
	}
	if r.store != nil {
		if _, err := r.store.Tenants(ctx); err != nil {
			return fmt.Errorf("episodic store: %w", err)
		}
	}
	return nil
}

// opsMux serves /healthz (the process is up), /readyz (its dependencies
// answer) and /metrics.
func opsMux(r readiness, m *metrics.Metrics) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, req *http.Request) {
		if err := r.check(req.Context()); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	if m != nil {
		mux.Handle("GET /metrics", m.Handler())
	}
	return mux
}

// httpServer serves handler on a listener it opens at once, so that a
// taken port fails at start with a clear error.
type httpServer struct {
	srv *http.Server
	ln  net.Listener
	log *slog.Logger
}

// listenHTTP serves h on addr behind the listener's guard (guardFor).
func listenHTTP(addr, what, flagName string, h http.Handler, log *slog.Logger) (*httpServer, error) {
	ln, err := listen(addr, what, flagName)
	if err != nil {
		return nil, err
	}
	guard, err := guardFor(ln.Addr().String())
	if err != nil {
		ln.Close()
		return nil, err
	}
	return serveHTTP(ln, what, guard, h, log), nil
}

// listen opens a listener on addr, for a server named what that its flag
// flagName configures.
func listen(addr, what, flagName string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s cannot listen on %s: %w (choose another address with %s)", what, addr, err, flagName)
	}
	return ln, nil
}

// serveHTTP serves handler on ln, opened by listen, behind guard: every
// listener checks Host and Origin before anything else.
func serveHTTP(ln net.Listener, what string, guard *httpguard.Policy, h http.Handler, log *slog.Logger) *httpServer {
	s := &httpServer{srv: &http.Server{Handler: guard.Wrap(h), ReadHeaderTimeout: 10 * time.Second}, ln: ln, log: log}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server stopped", "what", what, "error", err)
		}
	}()
	return s
}

func (s *httpServer) Addr() string { return s.ln.Addr().String() }

func (s *httpServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// consoleHandler is the memory console, served next to the MCP endpoint
// with the same tenants and tokens, behind the listener's guard. Its
// cookies are signed with the deployment's console key (keys.Console: the
// environment's, or the data directory's key file), so a sign-in holds on
// every replica and across restarts, and nothing in the store can forge
// one.
func consoleHandler(svc *service.Service, rt *app.Runtime, tokens *auth.Tokens, guard *httpguard.Policy, tenant, temporalUI string, m *metrics.Metrics, log *slog.Logger) (http.Handler, error) {
	return console.New(console.Options{Service: svc, Store: rt.Store, Screener: rt.Screener, Tokens: tokens, DefaultTenant: tenant, Key: rt.Keys.Get(keys.Console), Guard: guard,
		TemporalUI: temporalUI, Namespace: envOr("TEMPORAL_NAMESPACE", "default"), Logger: log, Metrics: m})
}

// mcpMux serves the MCP endpoint at /mcp, and the console at /ui, next to
// the ops endpoints. With sessions nil the endpoint is stateless
// (mcpserver.HTTPOptions.Stateless): `hindsight mcp`, which runs as any
// number of replicas behind a balancer without affinity, serves so.
// `hindsight dev` keeps sessions: it is one process, so they cost nothing
// there, and it is what the MCP conformance suite runs against, whose SSE
// scenarios want a session ID.
func mcpMux(s *mcpserver_.MCPServer, tokens *auth.Tokens, tenant string, sessions *mcpserver.Sessions, ops *http.ServeMux, ui http.Handler) http.Handler {
	if ui != nil {
		ops.Handle(console.Path, ui)
		ops.Handle(console.Path+"/", ui)
	}
	ops.Handle("/mcp", mcpserver.HTTPHandler(s, mcpserver.HTTPOptions{
		Path: "/mcp", Tokens: tokens, DefaultTenant: tenant, Sessions: sessions, Stateless: sessions == nil,
	}))
	return ops
}

// mcpSessions signs MCP session IDs with the deployment's session key
// (keys.Session), so that sessions survive a restart and work on every
// replica; the sessions clients end are kept in the store's settings, so
// they stay ended after a restart.
func mcpSessions(key []byte, settings mcpserver.Settings) *mcpserver.Sessions {
	return mcpserver.NewSessions(key).Persist(settings)
}
