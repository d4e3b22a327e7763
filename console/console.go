package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/hindsight-memory/hindsight/auth"
	"github.com/hindsight-memory/hindsight/httpguard"
	"github.com/hindsight-memory/hindsight/lang/inject"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/recall"
	"github.com/hindsight-memory/hindsight/service"
)

// Path is where the console is served.
const Path = "/ui"

// Service is what the console changes memory through: the service the MCP
// tools use, so every change is a ledger decision, and every action is
// authorised by the rule the tools apply (auth.Authorize).
type Service interface {
	Recall(ctx context.Context, q memory.Query) (recall.Response, error)
	Correct(ctx context.Context, tenant, id, content string, outdated bool, requestID string) (memory.Decision, bool, error)
	Pin(ctx context.Context, tenant, id string, pinned bool, requestID string) (memory.Decision, bool, error)
	Release(ctx context.Context, tenant, id, reason, requestID string) (memory.Decision, bool, error)
	Undo(ctx context.Context, tenant, decisionID string, force bool) (memory.Decision, error)
	Forget(ctx context.Context, in service.ForgetRequest) (service.ForgetReceipt, error)
	Authorize(ctx context.Context, tenant string, a auth.Action) error
}

// SnapshotMetrics is told the size of the overview's snapshot cache
// (*metrics.Metrics has it).
type SnapshotMetrics interface {
	ConsoleSnapshots(entries int, bytes int64, evicted int)
}

// Options configure the console.
type Options struct {
	Service Service
	// Store is read for the pages, always with the caller's tenant.
	Store memory.EpisodicStore
	// Tokens, when set, require sign-in with a token; nil serves
	// DefaultTenant (the listener is then loopback only).
	Tokens        *auth.Tokens
	DefaultTenant string
	// Key signs session cookies and CSRF tokens (the deployment's key, so
	// sessions work on every replica).
	Key []byte
	// Guard is the listener's policy: the origins a sign-in may come from,
	// and whether a request came over TLS (cookies are then Secure). Nil
	// is a loopback listener's on any port.
	Guard *httpguard.Policy
	// TemporalUI is the Temporal Web UI's address, for links to the runs
	// that made each change ("" for none); Namespace its namespace.
	TemporalUI string
	Namespace  string
	Logger     *slog.Logger
	// Now is the clock (time.Now by default).
	Now func() time.Time
	// SnapshotTenants and SnapshotBytes bound the overview's cache of
	// snapshots (one per tenant and user), evicted least recently used
	// first; 0 means 64 and 64 MiB. Metrics, if set, is told its size.
	SnapshotTenants int
	SnapshotBytes   int64
	Metrics         SnapshotMetrics
	// Screener says which texts of an episode an agent is not shown, so
	// the episode's page marks them (nil: lang/inject's).
	Screener memory.Screener
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Console serves the pages.
type Console struct {
	o    Options
	tmpl *template.Template
	mux  *http.ServeMux
	// conflictIndex keeps each memory version's reading for the
	// overview's conflict check.
	conflictIndex recall.ConflictIndex
	snaps         *snapshotCache
	// crossOrigin refuses a POST a browser says came from another site
	// (Sec-Fetch-Site), before the CSRF token is looked at.
	crossOrigin *http.CrossOriginProtection
}

// New returns the console's handler, to mount at Path.
func New(o Options) (*Console, error) {
	if o.Service == nil || o.Store == nil {
		return nil, errors.New("console: a service and a store are required")
	}
	if len(o.Key) < 16 {
		return nil, errors.New("console: the signing key must be at least 16 bytes")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.Guard == nil {
		o.Guard = httpguard.Loopback()
	}
	if o.Screener == nil {
		o.Screener = inject.Detector{}
	}
	t, err := template.New("").Funcs(funcs(o)).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("console: templates: %w", err)
	}
	c := &Console{o: o, tmpl: t, mux: http.NewServeMux(), crossOrigin: http.NewCrossOriginProtection(),
		snaps: newSnapshotCache(o.SnapshotTenants, o.SnapshotBytes, o.Metrics)}
	static, _ := fs.Sub(staticFS, "static")
	c.mux.Handle("GET "+Path+"/static/", http.StripPrefix(Path+"/static/", http.FileServerFS(static)))
	c.mux.HandleFunc("GET "+Path+"/signin", c.signinPage)
	c.mux.HandleFunc("POST "+Path+"/signin", c.signin)
	for pattern, h := range map[string]pageFunc{
		"GET " + Path + "/{$}":                     c.overview,
		"GET " + Path + "/memories":                c.memories,
		"GET " + Path + "/memories/{id}":           c.memory,
		"GET " + Path + "/episodes":                c.episodes,
		"GET " + Path + "/episodes/{id}":           c.episode,
		"GET " + Path + "/decisions":               c.decisions,
		"GET " + Path + "/confirm":                 c.confirm,
		"POST " + Path + "/memories/{id}/correct":  c.correct,
		"POST " + Path + "/memories/{id}/outdated": c.outdated,
		"POST " + Path + "/memories/{id}/pin":      c.pin,
		"POST " + Path + "/memories/{id}/release":  c.release,
		"POST " + Path + "/decisions/{id}/undo":    c.undo,
		"POST " + Path + "/forget":                 c.forget,
		"POST " + Path + "/signout":                c.signout,
	} {
		c.mux.Handle(pattern, c.page(h))
	}
	c.mux.HandleFunc("GET "+Path, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Path+"/", http.StatusMovedPermanently)
	})
	return c, nil
}

// ServeHTTP implements http.Handler, with the console's security headers
// on every answer.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	c.mux.ServeHTTP(w, r)
}

// caller is who a request acts for.
type caller struct {
	Tenant string
	UserID string // a token bound to one user sees that user's memories and the shared ones
	Agents []string
	csrf   string
	Signed bool // signed in with a token (a sign-out button makes sense)
}

// identity is the caller as the service's authorisation reads it.
func (who caller) identity() auth.Identity {
	return auth.Identity{Tenant: who.Tenant, UserID: who.UserID, Agents: who.Agents}
}

// viewer is what the caller sees: with a tenant-wide token (or none, on
// loopback) everything of the tenant, with a user-bound one what its user
// and agents see (memory.Viewer).
func (who caller) viewer() memory.Viewer { return who.identity().Viewer() }

type pageFunc func(w http.ResponseWriter, r *http.Request, who caller) error

// page authenticates a request, checks a POST's origin and CSRF token,
// puts the caller's identity in the request's context for the service,
// and renders an error page for what the handler returns.
func (c *Console) page(h pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who, ok := c.caller(w, r)
		if !ok {
			http.Redirect(w, r, Path+"/signin?next="+urlQuery(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		if r.Method == http.MethodPost {
			if err := c.crossOrigin.Check(r); err != nil {
				c.fail(w, r, who, http.StatusForbidden, "This form did not come from the console's own pages. Go back, reload the page and try again.")
				return
			}
			if err := r.ParseForm(); err != nil || who.csrf == "" || !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(who.csrf)) {
				c.fail(w, r, who, http.StatusForbidden, "This form has expired or did not come from the console. Go back, reload the page and try again.")
				return
			}
		}
		r = r.WithContext(auth.WithIdentity(r.Context(), who.identity()))
		if err := h(w, r, who); err != nil {
			status, msg := http.StatusInternalServerError, "Something went wrong; the server log has the details."
			switch {
			case memory.IsNotFound(err):
				status, msg = http.StatusNotFound, "Not found."
			case memory.IsInvalid(err) || memory.ErrorCode(err) == memory.ECONFLICT:
				status, msg = http.StatusBadRequest, memory.CallerMessage(err)
			default:
				c.o.Logger.Error("console", "path", r.URL.Path, "tenant", who.Tenant, "error", err)
			}
			c.fail(w, r, who, status, msg)
		}
	})
}

const cookieName = "hindsight_console"

// session is what the console's cookie holds, signed: a browser's own
// random nonce, which its CSRF tokens are derived from, and, once it
// signed in, a reference to the token it signed in with
// (auth.Tokens.Ref), which must still be in the tokens file.
type session struct {
	Nonce string `json:"n"`
	Exp   int64  `json:"e"`
	Ref   string `json:"r,omitempty"`
}

// sessionLife is how long a sign-in, or a browser's session without
// one, lasts.
const sessionLife = 12 * time.Hour

// readSession returns the session r's cookie holds, if it is one this
// console signed and it has not expired.
func (c *Console) readSession(r *http.Request) (session, bool) {
	ck, err := r.Cookie(cookieName)
	if err != nil {
		return session{}, false
	}
	payload, sig, ok := strings.Cut(ck.Value, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(c.sign("session|"+payload))) {
		return session{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return session{}, false
	}
	var s session
	if json.Unmarshal(raw, &s) != nil || s.Nonce == "" || c.o.Now().Unix() > s.Exp {
		return session{}, false
	}
	return s, true
}

// writeSession sets a new session cookie: a fresh nonce (so a sign-in
// never keeps the CSRF tokens of the browser session before it), with ref
// when the browser signed in.
func (c *Console) writeSession(w http.ResponseWriter, r *http.Request, ref string) session {
	var n [18]byte
	_, _ = rand.Read(n[:])
	s := session{Nonce: base64.RawURLEncoding.EncodeToString(n[:]), Exp: c.o.Now().Add(sessionLife).Unix(), Ref: ref}
	raw, _ := json.Marshal(s)
	payload := base64.RawURLEncoding.EncodeToString(raw)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: payload + "." + c.sign("session|"+payload), Path: Path, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: c.o.Guard.Secure(r), MaxAge: int(sessionLife / time.Second)})
	return s
}

func (c *Console) csrfOf(s session) string { return c.sign("csrf|" + s.Nonce) }

// caller is who r comes from. Without tokens it is the default tenant, in
// a browser session of its own: one without a session cookie gets one on
// a GET (a POST without it fails its CSRF check). With tokens it is the
// identity of the token its cookie refers to, while that token is still
// in the tokens file; otherwise it is not signed in.
func (c *Console) caller(w http.ResponseWriter, r *http.Request) (caller, bool) {
	s, ok := c.readSession(r)
	if c.o.Tokens == nil {
		who := caller{Tenant: c.o.DefaultTenant}
		if !ok && r.Method != http.MethodPost {
			s, ok = c.writeSession(w, r, ""), true
		}
		if ok {
			who.csrf = c.csrfOf(s)
		}
		return who, true
	}
	if !ok || s.Ref == "" {
		return caller{}, false
	}
	id, ok := c.o.Tokens.ByRef(c.o.Key, s.Ref)
	if !ok {
		return caller{}, false
	}
	return caller{Tenant: id.Tenant, UserID: id.UserID, Agents: id.Agents, csrf: c.csrfOf(s), Signed: true}, true
}

func (c *Console) sign(s string) string {
	m := hmac.New(sha256.New, c.o.Key)
	m.Write([]byte("hindsight-console|" + s))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// signinPage shows the sign-in form, in a browser session whose CSRF token
// the form carries: a page elsewhere cannot sign the browser in with a
// token of its own choosing.
func (c *Console) signinPage(w http.ResponseWriter, r *http.Request) {
	if c.o.Tokens == nil {
		http.Redirect(w, r, Path+"/", http.StatusSeeOther)
		return
	}
	s, ok := c.readSession(r)
	if !ok {
		s = c.writeSession(w, r, "")
	}
	c.render(w, r, caller{csrf: c.csrfOf(s)}, http.StatusOK, "signin", map[string]any{"Next": safeNext(r.URL.Query().Get("next"))})
}

// signin checks a token and signs the browser in. The form must come from
// the console's own page: an Origin the listener does not allow, "null"
// among them, a cross-site Sec-Fetch-Site, or a missing or foreign CSRF
// token is refused.
func (c *Console) signin(w http.ResponseWriter, r *http.Request) {
	if c.o.Tokens == nil {
		http.Redirect(w, r, Path+"/", http.StatusSeeOther)
		return
	}
	if o, sent := r.Header["Origin"]; (sent && (len(o) != 1 || !c.o.Guard.AllowsOrigin(o[0]))) || c.crossOrigin.Check(r) != nil {
		http.Error(w, "forbidden: sign in from the console's own page", http.StatusForbidden)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	next := safeNext(r.PostForm.Get("next"))
	pre, ok := c.readSession(r)
	if !ok || !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(c.csrfOf(pre))) {
		s := c.writeSession(w, r, "")
		c.render(w, r, caller{csrf: c.csrfOf(s)}, http.StatusForbidden, "signin", map[string]any{"Next": next, "Error": "This form has expired or did not come from the console; sign in again."})
		return
	}
	token := strings.TrimSpace(r.PostForm.Get("token"))
	if _, ok := c.o.Tokens.Identity(token); !ok {
		c.render(w, r, caller{csrf: c.csrfOf(pre)}, http.StatusUnauthorized, "signin", map[string]any{"Next": next, "Error": "That token is not in the server's token file."})
		return
	}
	c.writeSession(w, r, c.o.Tokens.Ref(c.o.Key, token))
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// signout ends the browser's session; like every POST it carries the
// session's CSRF token.
func (c *Console) signout(w http.ResponseWriter, r *http.Request, _ caller) error {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: Path, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: c.o.Guard.Secure(r), MaxAge: -1})
	http.Redirect(w, r, Path+"/signin", http.StatusSeeOther)
	return nil
}

// safeNext keeps a redirect inside the console.
func safeNext(next string) string {
	if strings.HasPrefix(next, Path+"/") && !strings.HasPrefix(next, "//") && !strings.ContainsAny(next, "\\\r\n") {
		return next
	}
	return Path + "/"
}

// render executes a page template inside the layout.
func (c *Console) render(w http.ResponseWriter, r *http.Request, who caller, status int, name string, data map[string]any) {
	if data == nil {
		data = map[string]any{}
	}
	if _, ok := data["Title"]; !ok {
		data["Title"] = titles[name]
	}
	data["Who"] = who
	data["CSRF"] = who.csrf
	data["Page"] = name
	data["Path"] = Path
	data["Self"] = r.URL.RequestURI()
	var b strings.Builder
	if err := c.tmpl.ExecuteTemplate(&b, name, data); err != nil {
		c.o.Logger.Error("console: render", "page", name, "error", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

func (c *Console) fail(w http.ResponseWriter, r *http.Request, who caller, status int, msg string) {
	c.render(w, r, who, status, "error", map[string]any{"Status": status, "Message": msg})
}

var titles = map[string]string{"overview": "Overview", "memories": "Memories", "memory": "Memory", "episodes": "Episodes",
	"episode": "Episode", "decisions": "Decisions", "confirm": "Confirm", "done": "Done", "receipt": "Forgotten", "signin": "Sign in", "error": "Error"}

func urlQuery(s string) string {
	return strings.NewReplacer("%", "%25", "&", "%26", "#", "%23", "+", "%2B", " ", "%20", "?", "%3F").Replace(s)
}
