package console

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hindsight-memory/hindsight/auth"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/recall"
	"github.com/hindsight-memory/hindsight/service"
)

// Path is where the console is served.
const Path = "/ui"

// Service is what the console changes memory through: the service the MCP
// tools use, so every change is a ledger decision.
type Service interface {
	Recall(ctx context.Context, q memory.Query) (recall.Response, error)
	Correct(ctx context.Context, tenant, id, content string, outdated bool, requestID string) (memory.Decision, bool, error)
	Pin(ctx context.Context, tenant, id string, pinned bool, requestID string) (memory.Decision, bool, error)
	Undo(ctx context.Context, tenant, decisionID string, force bool) (memory.Decision, error)
	Forget(ctx context.Context, in service.ForgetRequest) (service.ForgetReceipt, error)
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
	// TemporalUI is the Temporal Web UI's address, for links to the runs
	// that made each change ("" for none); Namespace its namespace.
	TemporalUI string
	Namespace  string
	Logger     *slog.Logger
	// Now is the clock (time.Now by default).
	Now func() time.Time
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
	snaps         sync.Map // tenant and user → *overviewSnapshot
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
	t, err := template.New("").Funcs(funcs(o)).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("console: templates: %w", err)
	}
	c := &Console{o: o, tmpl: t, mux: http.NewServeMux()}
	static, _ := fs.Sub(staticFS, "static")
	c.mux.Handle("GET "+Path+"/static/", http.StripPrefix(Path+"/static/", http.FileServerFS(static)))
	c.mux.HandleFunc("GET "+Path+"/signin", c.signinPage)
	c.mux.HandleFunc("POST "+Path+"/signin", c.signin)
	c.mux.HandleFunc("POST "+Path+"/signout", c.signout)
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
		"POST " + Path + "/decisions/{id}/undo":    c.undo,
		"POST " + Path + "/forget":                 c.forget,
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
	csrf   string
	Signed bool // signed in with a token (a sign-out button makes sense)
}

type pageFunc func(w http.ResponseWriter, r *http.Request, who caller) error

// page authenticates a request, checks a POST's CSRF token, and renders
// an error page for what the handler returns.
func (c *Console) page(h pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who, ok := c.caller(r)
		if !ok {
			http.Redirect(w, r, Path+"/signin?next="+urlQuery(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err != nil || !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(who.csrf)) {
				c.fail(w, r, who, http.StatusForbidden, "This form has expired or did not come from the console. Go back, reload the page and try again.")
				return
			}
		}
		if err := h(w, r, who); err != nil {
			status, msg := http.StatusInternalServerError, "Something went wrong; the server log has the details."
			switch {
			case memory.IsNotFound(err):
				status, msg = http.StatusNotFound, "Not found."
			case memory.IsInvalid(err) || memory.ErrorCode(err) == memory.ECONFLICT:
				status, msg = http.StatusBadRequest, memory.ErrorMessage(err)
			default:
				c.o.Logger.Error("console", "path", r.URL.Path, "tenant", who.Tenant, "error", err)
			}
			c.fail(w, r, who, status, msg)
		}
	})
}

const cookieName = "hindsight_console"

// caller reads the session cookie (or, without tokens, the default
// tenant).
func (c *Console) caller(r *http.Request) (caller, bool) {
	if c.o.Tokens == nil {
		return caller{Tenant: c.o.DefaultTenant, csrf: c.sign("csrf|" + c.o.DefaultTenant)}, true
	}
	ck, err := r.Cookie(cookieName)
	if err != nil {
		return caller{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(ck.Value)
	if err != nil {
		return caller{}, false
	}
	parts := strings.Split(string(raw), "|")
	if len(parts) != 4 {
		return caller{}, false
	}
	tenant, user, exp, sig := parts[0], parts[1], parts[2], parts[3]
	if !hmac.Equal([]byte(sig), []byte(c.sign(tenant+"|"+user+"|"+exp))) {
		return caller{}, false
	}
	if n, err := strconv.ParseInt(exp, 10, 64); err != nil || c.o.Now().Unix() > n {
		return caller{}, false
	}
	return caller{Tenant: tenant, UserID: user, csrf: c.sign("csrf|" + ck.Value), Signed: true}, true
}

func (c *Console) sign(s string) string {
	m := hmac.New(sha256.New, c.o.Key)
	m.Write([]byte("hindsight-console|" + s))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// sessionLife is how long a sign-in lasts.
const sessionLife = 12 * time.Hour

func (c *Console) signinPage(w http.ResponseWriter, r *http.Request) {
	if c.o.Tokens == nil {
		http.Redirect(w, r, Path+"/", http.StatusSeeOther)
		return
	}
	c.render(w, r, caller{}, http.StatusOK, "signin", map[string]any{"Next": safeNext(r.URL.Query().Get("next"))})
}

func (c *Console) signin(w http.ResponseWriter, r *http.Request) {
	if c.o.Tokens == nil {
		http.Redirect(w, r, Path+"/", http.StatusSeeOther)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	// A sign-in form must come from the console itself.
	if o := r.Header.Get("Origin"); o != "" && o != "null" && !sameHost(o, r.Host) {
		http.Error(w, "sign in from the console's own page", http.StatusForbidden)
		return
	}
	id, ok := c.o.Tokens.Identity(strings.TrimSpace(r.PostForm.Get("token")))
	next := safeNext(r.PostForm.Get("next"))
	if !ok {
		c.render(w, r, caller{}, http.StatusUnauthorized, "signin", map[string]any{"Next": next, "Error": "That token is not in the server's token file."})
		return
	}
	exp := strconv.FormatInt(c.o.Now().Add(sessionLife).Unix(), 10)
	payload := id.Tenant + "|" + id.UserID + "|" + exp
	value := base64.RawURLEncoding.EncodeToString([]byte(payload + "|" + c.sign(payload)))
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: value, Path: Path, HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: int(sessionLife / time.Second)})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (c *Console) signout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: Path, HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, Path+"/signin", http.StatusSeeOther)
}

// safeNext keeps a redirect inside the console.
func safeNext(next string) string {
	if strings.HasPrefix(next, Path+"/") && !strings.HasPrefix(next, "//") && !strings.ContainsAny(next, "\\\r\n") {
		return next
	}
	return Path + "/"
}

func sameHost(origin, host string) bool {
	_, rest, ok := strings.Cut(origin, "://")
	return ok && rest == host
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
