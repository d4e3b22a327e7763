package console

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/auth"
	"github.com/hindsight-memory/hindsight/httpguard"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/recall"
	"github.com/hindsight-memory/hindsight/service"
)

// recordingService is the console's service with the real rule of who may
// do what (auth.Authorize over the store, as service.Service applies it)
// and changes that are only recorded: what these tests look at is which
// actions reach the service.
type recordingService struct {
	store memory.EpisodicStore

	mu       sync.Mutex
	forgot   []service.ForgetRequest
	released []string
	undone   []string
}

func (s *recordingService) Recall(context.Context, memory.Query) (recall.Response, error) {
	return recall.Response{}, nil
}

func (s *recordingService) decision(ctx context.Context, tenant, id, action string) (memory.Decision, bool, error) {
	m, err := s.store.Memory(ctx, tenant, id)
	if err != nil {
		return memory.Decision{}, false, err
	}
	return memory.Decision{ID: "d-" + action + "-" + id, Tenant: tenant, Action: memory.DecisionAction(action), After: []memory.Memory{m}}, false, nil
}

func (s *recordingService) Correct(ctx context.Context, tenant, id, _ string, _ bool, _ string) (memory.Decision, bool, error) {
	return s.decision(ctx, tenant, id, "correct")
}

func (s *recordingService) Pin(ctx context.Context, tenant, id string, _ bool, _ string) (memory.Decision, bool, error) {
	return s.decision(ctx, tenant, id, "correct")
}

func (s *recordingService) Release(ctx context.Context, tenant, id, reason, _ string) (memory.Decision, bool, error) {
	s.mu.Lock()
	s.released = append(s.released, id+": "+reason)
	s.mu.Unlock()
	return s.decision(ctx, tenant, id, "release")
}

func (s *recordingService) Undo(_ context.Context, tenant, id string, _ bool) (memory.Decision, error) {
	s.mu.Lock()
	s.undone = append(s.undone, id)
	s.mu.Unlock()
	return memory.Decision{ID: "d-undo", Tenant: tenant, Action: "undo", Undoes: id}, nil
}

func (s *recordingService) Forget(_ context.Context, in service.ForgetRequest) (service.ForgetReceipt, error) {
	s.mu.Lock()
	s.forgot = append(s.forgot, in)
	s.mu.Unlock()
	return service.ForgetReceipt{}, nil
}

func (s *recordingService) Authorize(ctx context.Context, tenant string, a auth.Action) error {
	return auth.Authorize(ctx, s.store, tenant, a)
}

// desk is a tenant with two users, alice and bob: a session of each, a
// private memory of each, a shared memory learned from bob's session,
// and quarantined memories, one alice's and one shared.
func desk(t *testing.T) *memory.MemStore {
	t.Helper()
	ctx := context.Background()
	s := memory.NewMemStore()
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	for _, u := range []string{"alice", "bob"} {
		sess := "S-" + u
		if err := s.AppendEvents(ctx, []memory.Event{{ID: "e-" + u, Tenant: "acme", SessionID: sess, UserID: u, Role: memory.RoleUser,
			Content: "Refund order A-777 for " + u, TS: at}}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutEpisode(ctx, memory.Episode{ID: memory.EpisodeID("acme", sess), Tenant: "acme", SessionID: sess, UserID: u,
			Task: "Refund order A-777 for " + u, Outcome: memory.OutcomeSuccess, Status: memory.EpisodeLive, StartedAt: at, EndedAt: at.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	mem := func(id, content string, scope memory.Scope, status memory.Status, sources ...string) memory.Memory {
		return memory.Memory{ID: id, Tenant: "acme", Version: 1, Kind: memory.KindFact, Content: content, Scope: scope, Status: status,
			Confidence: 0.6, Sources: sources, CreatedAt: at, UpdatedAt: at, ValidFrom: at}
	}
	if err := s.PutMemories(ctx, []memory.Memory{
		mem("m-alice", "Alice wants refunds to her card.", memory.UserScope("alice"), memory.StatusLive, memory.EpisodeID("acme", "S-alice")),
		mem("m-bob", "Bob wants refunds as store credit.", memory.UserScope("bob"), memory.StatusLive, memory.EpisodeID("acme", "S-bob")),
		mem("m-shared", "Refunds over 500 EUR need a second approver.", memory.SharedScope, memory.StatusLive, memory.EpisodeID("acme", "S-bob")),
		mem("q-alice", "Alice's notes mention a pastebin link.", memory.UserScope("alice"), memory.StatusQuarantined),
		mem("q-shared", "The refund desk uses pastebin for notes.", memory.SharedScope, memory.StatusQuarantined),
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.LogDecision(ctx, memory.Decision{ID: "d-bob", Tenant: "acme", Action: memory.ActionMerge, CreatedAt: at,
		After: []memory.Memory{mem("m-bob", "Bob wants refunds as store credit.", memory.UserScope("bob"), memory.StatusLive)}}); err != nil {
		t.Fatal(err)
	}
	return s
}

const deskTokens = "acme alice-token-0123456789 alice\nacme bob-token-0123456789 bob\nacme admin-token-0123456789\n"

func writeTokens(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// consoleServer serves a console over a real listener, as a browser
// reaches it.
func consoleServer(t *testing.T, o Options) (*httptest.Server, *Console) {
	t.Helper()
	if o.Key == nil {
		o.Key = []byte("the-deployment-key-1")
	}
	if o.DefaultTenant == "" {
		o.DefaultTenant = "acme"
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return srv, c
}

// browser is a client with its own cookies that does not follow
// redirects.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newBrowser(t *testing.T, srv *httptest.Server) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: srv.URL, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	code   int
	body   string
	header http.Header
}

func (b *browser) do(method, path string, form url.Values, header map[string]string) page {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return page{resp.StatusCode, string(raw), resp.Header}
}

func (b *browser) get(path string) page { return b.do(http.MethodGet, path, nil, nil) }

func (b *browser) post(path string, form url.Values) page {
	return b.do(http.MethodPost, path, form, nil)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the CSRF token of the forms of the page at path.
func (b *browser) csrf(path string) string {
	b.t.Helper()
	p := b.get(path)
	m := csrfField.FindStringSubmatch(p.body)
	if m == nil {
		b.t.Fatalf("GET %s (%d) has no form with a CSRF token:\n%s", path, p.code, p.body)
	}
	return m[1]
}

// signIn signs in with token through the sign-in form, as a person does.
func (b *browser) signIn(token string) {
	b.t.Helper()
	p := b.post("/ui/signin", url.Values{"token": {token}, "csrf": {b.csrf("/ui/signin")}, "next": {"/ui/memories"}})
	if p.code != http.StatusSeeOther || p.header.Get("Location") != "/ui/memories" {
		b.t.Fatalf("sign-in with the form: %d → %q\n%s", p.code, p.header.Get("Location"), p.body)
	}
}

func tokensOf(t *testing.T, path string) *auth.Tokens {
	t.Helper()
	tk, err := auth.LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// A cookie signed with another key, or past its time, is no session.
func TestSessionCookies(t *testing.T) {
	tk := tokensOf(t, writeTokens(t, "acme acme-token-0123456789\n"))
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	srv, _ := consoleServer(t, Options{Service: noService{}, Store: memory.NewMemStore(), Tokens: tk, Key: []byte("the-deployment-key-1"), Now: clock})
	other, _ := consoleServer(t, Options{Service: noService{}, Store: memory.NewMemStore(), Tokens: tk, Key: []byte("another-deployment-key"), Now: clock})
	b := newBrowser(t, srv)
	b.signIn("acme-token-0123456789")
	if p := b.get("/ui/memories"); p.code != http.StatusOK {
		t.Errorf("with its own cookie: %d", p.code)
	}
	u, _ := url.Parse(srv.URL + "/ui/")
	o := newBrowser(t, other)
	ou, _ := url.Parse(other.URL + "/ui/")
	o.c.Jar.SetCookies(ou, b.c.Jar.Cookies(u))
	if p := o.get("/ui/memories"); p.code != http.StatusSeeOther {
		t.Errorf("a cookie signed with another key: %d, want a redirect to sign-in", p.code)
	}
	now = now.Add(sessionLife + time.Minute)
	if p := b.get("/ui/memories"); p.code != http.StatusSeeOther {
		t.Errorf("an expired cookie: %d, want a redirect to sign-in", p.code)
	}
}

// Reproduction: sign-in accepted Origin: null and had no CSRF check, so a
// page elsewhere could sign a browser in with the attacker's token (login
// CSRF). Now it needs the console's own form, from an origin the listener
// serves.
func TestSignInComesFromTheConsolesOwnForm(t *testing.T) {
	tk := tokensOf(t, writeTokens(t, deskTokens))
	guard, err := httpguard.New(httpguard.Config{Listen: "127.0.0.1:8765"})
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := consoleServer(t, Options{Service: &recordingService{store: desk(t)}, Store: desk(t), Tokens: tk, Guard: guard})
	signin := func(b *browser, form url.Values, header map[string]string) int {
		form.Set("token", "bob-token-0123456789")
		return b.do(http.MethodPost, "/ui/signin", form, header).code
	}
	b := newBrowser(t, srv)
	if code := signin(b, url.Values{}, nil); code != http.StatusForbidden {
		t.Errorf("a sign-in without the form's CSRF token: %d, want 403", code)
	}
	token := b.csrf("/ui/signin")
	for name, header := range map[string]map[string]string{
		"Origin: null":           {"Origin": "null"},
		"a foreign origin":       {"Origin": "http://attacker.example"},
		"a rebinding origin":     {"Origin": "http://attacker.example:8765"},
		"a cross-site fetch":     {"Sec-Fetch-Site": "cross-site"},
		"two origins":            {"Origin": "http://127.0.0.1:8765, http://attacker.example"},
		"a same-site subdomain":  {"Sec-Fetch-Site": "same-site"},
		"the console's, no form": {"Origin": "http://127.0.0.1:8765"},
	} {
		form := url.Values{"csrf": {token}}
		if name == "the console's, no form" {
			form = url.Values{}
		}
		if code := signin(b, form, header); code != http.StatusForbidden {
			t.Errorf("sign-in with %s: %d, want 403", name, code)
		}
	}
	if p := b.get("/ui/memories"); p.code != http.StatusSeeOther {
		t.Fatalf("a refused sign-in signed the browser in: %d", p.code)
	}
	// The console's own form, from its own origin, signs in.
	token = b.csrf("/ui/signin")
	if code := signin(b, url.Values{"csrf": {token}, "next": {"/ui/memories"}}, map[string]string{"Origin": "http://127.0.0.1:8765", "Sec-Fetch-Site": "same-origin"}); code != http.StatusSeeOther {
		t.Fatalf("sign-in with the console's form: %d", code)
	}
	if p := b.get("/ui/memories"); p.code != http.StatusOK {
		t.Fatalf("after signing in: %d", p.code)
	}
}

// Reproduction: sign-out had no CSRF check, so any page could sign a
// person out.
func TestSignOutIsCSRFChecked(t *testing.T) {
	tk := tokensOf(t, writeTokens(t, deskTokens))
	srv, _ := consoleServer(t, Options{Service: &recordingService{store: desk(t)}, Store: desk(t), Tokens: tk})
	b := newBrowser(t, srv)
	b.signIn("alice-token-0123456789")
	if p := b.post("/ui/signout", url.Values{}); p.code != http.StatusForbidden {
		t.Errorf("sign-out without the CSRF token: %d, want 403", p.code)
	}
	if p := b.get("/ui/memories"); p.code != http.StatusOK {
		t.Fatalf("a refused sign-out signed the browser out: %d", p.code)
	}
	if p := b.post("/ui/signout", url.Values{"csrf": {b.csrf("/ui/memories")}}); p.code != http.StatusSeeOther {
		t.Fatalf("sign-out with the CSRF token: %d", p.code)
	}
	if p := b.get("/ui/memories"); p.code != http.StatusSeeOther {
		t.Fatalf("after signing out: %d, want a redirect to sign-in", p.code)
	}
}

// Reproduction: without a tokens file the CSRF token was a constant of
// the tenant, so a page that read it once could post in anyone's name.
// Now each browser has a random session of its own, and its token works
// only with its cookie.
func TestCSRFIsPerBrowserWithoutTokens(t *testing.T) {
	store := desk(t)
	svc := &recordingService{store: store}
	srv, _ := consoleServer(t, Options{Service: svc, Store: store})
	a, b := newBrowser(t, srv), newBrowser(t, srv)
	ta, tb := a.csrf("/ui/memories/m-alice"), b.csrf("/ui/memories/m-alice")
	if ta == tb {
		t.Fatalf("two browsers got the same CSRF token %q", ta)
	}
	forget := url.Values{"what": {"forget-memory"}, "id": {"m-alice"}}
	bare := &browser{t: t, base: srv.URL, c: &http.Client{CheckRedirect: a.c.CheckRedirect}}
	for name, c := range map[string]struct {
		b     *browser
		token string
	}{
		"another browser's token": {b, ta},
		"no cookie at all":        {bare, ta},
		"no token":                {a, ""},
	} {
		form := url.Values{"csrf": {c.token}}
		for k, v := range forget {
			form[k] = v
		}
		if p := c.b.post("/ui/forget", form); p.code != http.StatusForbidden {
			t.Errorf("a forget with %s: %d, want 403", name, p.code)
		}
	}
	if len(svc.forgot) != 0 {
		t.Fatalf("refused forms reached the service: %+v", svc.forgot)
	}
	forget.Set("csrf", ta)
	if p := a.post("/ui/forget", forget); p.code != http.StatusOK {
		t.Fatalf("a forget with the browser's own token: %d\n%s", p.code, p.body)
	}
	if len(svc.forgot) != 1 {
		t.Fatalf("the forget did not reach the service: %+v", svc.forgot)
	}
}

// Reproduction: a console session outlived its token for up to 12 hours
// after the token left the tokens file. The file is read again when it
// changes, and the session ends with its token.
func TestConsoleSessionEndsWithItsToken(t *testing.T) {
	path := writeTokens(t, deskTokens)
	tk := tokensOf(t, path)
	srv, _ := consoleServer(t, Options{Service: &recordingService{store: desk(t)}, Store: desk(t), Tokens: tk})
	alice, bob := newBrowser(t, srv), newBrowser(t, srv)
	alice.signIn("alice-token-0123456789")
	bob.signIn("bob-token-0123456789")
	if err := os.WriteFile(path, []byte("acme bob-token-0123456789 bob\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if p := alice.get("/ui/memories"); p.code != http.StatusSeeOther {
		t.Errorf("alice's token left the file, yet her session goes on: %d", p.code)
	}
	if p := bob.get("/ui/memories"); p.code != http.StatusOK {
		t.Errorf("bob's token is still in the file: %d", p.code)
	}
	// A sign-in with a token the file no longer holds fails too.
	b := newBrowser(t, srv)
	if p := b.post("/ui/signin", url.Values{"token": {"alice-token-0123456789"}, "csrf": {b.csrf("/ui/signin")}}); p.code != http.StatusUnauthorized {
		t.Errorf("sign-in with a removed token: %d, want 401", p.code)
	}
}

// Behind a TLS-terminating proxy configured as trusted, the cookie is
// Secure; the same header from anyone else changes nothing.
func TestSecureCookiesBehindATrustedProxy(t *testing.T) {
	for _, c := range []struct {
		proxies []string
		want    bool
	}{{[]string{"127.0.0.1"}, true}, {[]string{"10.9.9.9"}, false}} {
		guard, err := httpguard.New(httpguard.Config{Listen: "127.0.0.1:0", TrustedProxies: c.proxies})
		if err != nil {
			t.Fatal(err)
		}
		srv, _ := consoleServer(t, Options{Service: noService{}, Store: memory.NewMemStore(), Guard: guard})
		b := newBrowser(t, srv)
		p := b.do(http.MethodGet, "/ui/memories", nil, map[string]string{"X-Forwarded-Proto": "https"})
		ck := p.header.Get("Set-Cookie")
		if ck == "" || strings.Contains(ck, "; Secure") != c.want {
			t.Errorf("proxies %v, X-Forwarded-Proto https: cookie %q, want Secure %v", c.proxies, ck, c.want)
		}
	}
}

// Reproduction: a user-bound sign-in could forget another user's session
// (bob's events, episode and a memory deleted) and a shared memory, which
// memory_forget refuses. The console now asks the tools' rule
// (auth.Authorize) before every action, and shows another user's sessions
// nowhere, not even as the source of a shared memory.
func TestConsoleAppliesTheToolsRules(t *testing.T) {
	store := desk(t)
	svc := &recordingService{store: store}
	srv, _ := consoleServer(t, Options{Service: svc, Store: store, Tokens: tokensOf(t, writeTokens(t, deskTokens))})
	alice := newBrowser(t, srv)
	alice.signIn("alice-token-0123456789")
	csrf := alice.csrf("/ui/memories/m-alice")
	post := func(path string, form url.Values) page {
		form.Set("csrf", csrf)
		form.Set("nonce", "n1")
		return alice.post(path, form)
	}
	for name, form := range map[string]url.Values{
		"bob's session":     {"what": {"forget-session"}, "id": {"S-bob"}},
		"bob":               {"what": {"forget-user"}, "id": {"bob"}},
		"bob's memory":      {"what": {"forget-memory"}, "id": {"m-bob"}},
		"a shared memory":   {"what": {"forget-memory"}, "id": {"m-shared"}},
		"an unknown thing":  {"what": {"forget-session"}, "id": {"S-nobody"}},
		"bob's, confirmed?": {"what": {"forget-session"}, "id": {"S-bob"}, "back": {"/ui/"}},
	} {
		if p := post("/ui/forget", form); p.code == http.StatusOK {
			t.Errorf("alice forgot %s: %d", name, p.code)
		}
	}
	if len(svc.forgot) != 0 {
		t.Fatalf("refused forgets reached the service: %+v", svc.forgot)
	}
	for _, path := range []string{"/ui/confirm?what=forget-session&id=S-bob", "/ui/confirm?what=forget-user&id=bob",
		"/ui/episodes/" + memory.EpisodeID("acme", "S-bob"), "/ui/memories/m-bob", "/ui/confirm?what=undo&id=d-bob"} {
		if p := alice.get(path); p.code == http.StatusOK {
			t.Errorf("alice GET %s: %d", path, p.code)
		}
	}
	if p := post("/ui/decisions/d-bob/undo", url.Values{}); p.code == http.StatusOK || len(svc.undone) != 0 {
		t.Errorf("alice undid a decision on bob's memory: %d %v", p.code, svc.undone)
	}
	// The shared memory learned from bob's session names no task of his.
	p := alice.get("/ui/memories/m-shared")
	if p.code != http.StatusOK || strings.Contains(p.body, "Refund order A-777 for bob") || !strings.Contains(p.body, "1 session(s) of other users") {
		t.Errorf("the shared memory's page shows bob's session to alice (%d):\n%s", p.code, p.body)
	}
	// Her own session she may forget.
	if p := post("/ui/forget", url.Values{"what": {"forget-session"}, "id": {"S-alice"}}); p.code != http.StatusOK || len(svc.forgot) != 1 {
		t.Fatalf("alice forgetting her own session: %d %+v\n%s", p.code, svc.forgot, p.body)
	}
	// A tenant-wide sign-in sees bob's session as a source.
	admin := newBrowser(t, srv)
	admin.signIn("admin-token-0123456789")
	if p := admin.get("/ui/memories/m-shared"); !strings.Contains(p.body, "Refund order A-777 for bob") {
		t.Errorf("the tenant's own sign-in does not see the shared memory's source:\n%s", p.body)
	}
}

// A quarantined memory is released from its page: a confirmation that
// asks why, then the decision with a way to undo it. A user-bound sign-in
// releases only its user's memories.
func TestQuarantineReleaseAsksAndCanBeUndone(t *testing.T) {
	store := desk(t)
	svc := &recordingService{store: store}
	srv, _ := consoleServer(t, Options{Service: svc, Store: store, Tokens: tokensOf(t, writeTokens(t, deskTokens))})
	alice := newBrowser(t, srv)
	alice.signIn("alice-token-0123456789")
	page := alice.get("/ui/memories/q-alice")
	if !strings.Contains(page.body, "/ui/confirm?what=release&amp;id=q-alice") {
		t.Fatalf("a quarantined memory's page offers no release:\n%s", page.body)
	}
	confirm := alice.get("/ui/confirm?what=release&id=q-alice&back=/ui/memories/q-alice")
	if confirm.code != http.StatusOK || !strings.Contains(confirm.body, `action="/ui/memories/q-alice/release"`) || !strings.Contains(confirm.body, `name="why"`) {
		t.Fatalf("the release confirmation (%d):\n%s", confirm.code, confirm.body)
	}
	csrf := csrfField.FindStringSubmatch(confirm.body)[1]
	if p := alice.post("/ui/memories/q-alice/release", url.Values{"csrf": {csrf}, "nonce": {"n1"}}); p.code != http.StatusBadRequest || len(svc.released) != 0 {
		t.Errorf("a release without a reason: %d %v", p.code, svc.released)
	}
	done := alice.post("/ui/memories/q-alice/release", url.Values{"csrf": {csrf}, "nonce": {"n1"}, "why": {"a note about where the link is, nothing to do"}})
	if done.code != http.StatusOK || len(svc.released) != 1 || !strings.Contains(svc.released[0], "nothing to do") {
		t.Fatalf("release: %d %v\n%s", done.code, svc.released, done.body)
	}
	if !strings.Contains(done.body, "/ui/confirm?what=undo&amp;id=d-release-q-alice") {
		t.Errorf("the release's page offers no undo:\n%s", done.body)
	}
	if p := alice.get("/ui/confirm?what=release&id=q-shared"); p.code == http.StatusOK {
		t.Errorf("alice may release a shared memory: %d", p.code)
	}
	if p := alice.post("/ui/memories/q-shared/release", url.Values{"csrf": {csrf}, "nonce": {"n2"}, "why": {"x"}}); p.code == http.StatusOK || len(svc.released) != 1 {
		t.Errorf("alice released a shared memory: %d %v", p.code, svc.released)
	}
	if p := alice.get("/ui/confirm?what=release&id=m-alice"); p.code != http.StatusBadRequest {
		t.Errorf("a live memory offered for release: %d", p.code)
	}
}

// countingMetrics records what the snapshot cache reports.
type countingMetrics struct {
	mu      sync.Mutex
	entries int
	bytes   int64
	evicted int
}

func (m *countingMetrics) ConsoleSnapshots(entries int, bytes int64, evicted int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries, m.bytes, m.evicted = entries, bytes, m.evicted+evicted
}

// Reproduction: the overview kept a snapshot of every tenant and user it
// ever served, never evicted. The cache is bounded by snapshots and by
// bytes, evicts the least recently used, and says so in a metric.
func TestSnapshotCacheIsBounded(t *testing.T) {
	store := memory.NewMemStore()
	ctx := context.Background()
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	const tenants = 12
	for i := range tenants {
		tenant := "t" + string(rune('a'+i))
		var ms []memory.Memory
		for k := range 20 {
			ms = append(ms, memory.Memory{ID: tenant + "-" + string(rune('a'+k)), Tenant: tenant, Version: 1, Kind: memory.KindFact,
				Content: strings.Repeat("a memory of some length ", 8), Status: memory.StatusLive, CreatedAt: at, UpdatedAt: at})
		}
		if err := store.PutMemories(ctx, ms); err != nil {
			t.Fatal(err)
		}
	}
	m := &countingMetrics{}
	var lines []string
	for i := range tenants {
		lines = append(lines, "t"+string(rune('a'+i))+" token-of-tenant-"+string(rune('a'+i))+"-0123456789")
	}
	srv, c := consoleServer(t, Options{Service: noService{}, Store: store, Tokens: tokensOf(t, writeTokens(t, strings.Join(lines, "\n"))),
		SnapshotTenants: 4, SnapshotBytes: 40 << 10, Metrics: m})
	one := snapshotSize(&overviewSnapshot{ms: make([]memory.Memory, 20)})
	for i := range tenants {
		b := newBrowser(t, srv)
		b.signIn("token-of-tenant-" + string(rune('a'+i)) + "-0123456789")
		if p := b.get("/ui/"); p.code != http.StatusOK {
			t.Fatalf("overview of tenant %d: %d", i, p.code)
		}
		n, bytes := c.snaps.size()
		if n > 4 || bytes > 40<<10 {
			t.Fatalf("after %d tenants the cache holds %d snapshots, %d bytes; the bounds are 4 and %d", i+1, n, bytes, 40<<10)
		}
	}
	n, bytes := c.snaps.size()
	if n == 0 || bytes < one {
		t.Fatalf("the cache keeps nothing: %d snapshots, %d bytes", n, bytes)
	}
	if m.evicted < tenants-4 || m.entries != n || m.bytes != bytes {
		t.Errorf("the metric says %d snapshots, %d bytes, %d evicted; the cache holds %d, %d", m.entries, m.bytes, m.evicted, n, bytes)
	}
	// The least recently used goes first: the newest tenant is kept.
	if _, ok := c.snaps.get("tl\x00\x00"); !ok {
		t.Error("the most recently used snapshot was evicted")
	}
	if _, ok := c.snaps.get("ta\x00\x00"); ok {
		t.Error("the least recently used snapshot was kept")
	}
}

// Filters have visible labels, charts an accessible name that says what
// they show, and a diff marks what was removed and added in text, not by
// colour alone.
func TestPagesAreAccessible(t *testing.T) {
	store := desk(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	v2 := memory.Memory{ID: "m-alice", Tenant: "acme", Version: 2, Kind: memory.KindFact, Content: "Alice wants refunds to her bank account.",
		Scope: memory.UserScope("alice"), Status: memory.StatusLive, CreatedAt: at, UpdatedAt: at}
	if err := store.PutMemories(ctx, []memory.Memory{v2}); err != nil {
		t.Fatal(err)
	}
	srv, _ := consoleServer(t, Options{Service: &recordingService{store: store}, Store: store})
	b := newBrowser(t, srv)
	for _, path := range []string{"/ui/memories", "/ui/episodes"} {
		body := b.get(path).body
		form := body[strings.Index(body, `class="filters"`):]
		form = form[:strings.Index(form, "</form>")]
		control := regexp.MustCompile(`<(input|select)\b[^>]*>`)
		controls, labelled := len(control.FindAllString(form, -1)), 0
		for _, l := range regexp.MustCompile(`(?s)<label[^>]*>(.*?)</label>`).FindAllStringSubmatch(form, -1) {
			text := regexp.MustCompile(`(?s)<select.*?</select>|<[^>]*>`).ReplaceAllString(l[1], "")
			if strings.TrimSpace(text) != "" {
				labelled += len(control.FindAllString(l[1], -1))
			}
		}
		if controls == 0 || labelled != controls {
			t.Errorf("%s: %d filter controls, %d inside a label with visible text:\n%s", path, controls, labelled, form)
		}
	}
	overview := b.get("/ui/").body
	for _, svg := range regexp.MustCompile(`<svg[^>]*>`).FindAllString(overview, -1) {
		if !regexp.MustCompile(`role="img" aria-label="[^"]*\w[^"]*"`).MatchString(svg) {
			t.Errorf("a chart without an accessible name: %s", svg)
		}
	}
	if !strings.Contains(overview, `aria-label="live memories by kind: fact`) {
		t.Errorf("the kind chart's name does not say what it counts:\n%s", overview)
	}
	diff := b.get("/ui/memories/m-alice").body
	if !strings.Contains(diff, `<span class="sr">removed: </span>card.`) || !strings.Contains(diff, `<span class="sr">added: </span>bank account.`) ||
		!strings.Contains(diff, `[−`) || !strings.Contains(diff, `[+`) {
		t.Errorf("the diff marks changes by colour alone:\n%s", diff)
	}
}
