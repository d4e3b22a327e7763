package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hindsight-memory/hindsight/examples"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/recall"
	"github.com/hindsight-memory/hindsight/service"
)

// reportSessions are a preference for UTC report timestamps and, a week
// later, its change to Beijing time: the conflict the console shows.
func reportSessions(t *testing.T, st *devStack, tenant string) {
	t.Helper()
	ctx := context.Background()
	day := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for i, say := range []string{
		"Build the weekly revenue report. From now on, always give report timestamps in UTC.",
		"Build the weekly revenue report again. Change of plan: report timestamps should use Beijing time (UTC+8) from now on, not UTC.",
	} {
		at := day.AddDate(0, 0, 7*i)
		_, err := st.service.EndSession(ctx, tenant, service.EndRequest{
			SessionID: "report-" + string(rune('a'+i)), Wait: true, Outcome: memory.OutcomeSuccess,
			Events: []memory.Event{
				{Role: memory.RoleUser, Content: say, TS: at},
				{Role: memory.RoleAssistant, ToolName: "sql", ToolArgs: `{"query":"SELECT day, sum(total) FROM sales GROUP BY day"}`, TS: at.Add(time.Minute)},
				{Role: memory.RoleTool, ToolName: "sql", ToolResult: "7 rows", TS: at.Add(2 * time.Minute)},
				{Role: memory.RoleAssistant, Content: "The report is ready.", TS: at.Add(3 * time.Minute)},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// endExamples ends the example sessions (examples/), in order.
func endExamples(t *testing.T, st *devStack) {
	t.Helper()
	for _, ex := range examples.All() {
		tr, err := memory.ParseTranscript(ex.Data, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.service.EndSession(context.Background(), memory.DefaultTenant, service.EndRequest{
			SessionID: tr.SessionID, Events: tr.Events, Task: tr.Task, Outcome: tr.Outcome, Agent: tr.Agent, UserID: tr.UserID,
			StartedAt: tr.StartedAt, EndedAt: tr.EndedAt, Wait: true,
		}); err != nil {
			t.Fatalf("end example %s: %v", ex.Name, err)
		}
	}
}

// utcAndConflict finds the UTC preference that a Beijing-time one
// superseded, and the decision that did it.
func utcAndConflict(t *testing.T, st *devStack, tenant string) (memory.Memory, memory.Decision) {
	t.Helper()
	ctx := context.Background()
	ms, err := st.runtime.Store.Memories(ctx, memory.MemoryFilter{Tenant: tenant})
	if err != nil {
		t.Fatal(err)
	}
	var utc []string
	for _, m := range ms {
		if !strings.Contains(m.Content, "UTC") || strings.Contains(m.Content, "Beijing") || strings.Contains(m.Content, "北京") {
			continue
		}
		utc = append(utc, m.Content)
		ds, err := st.runtime.Store.Decisions(ctx, memory.DecisionFilter{Tenant: tenant, MemoryID: m.ID})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.Verdict == memory.VerdictConflicts && d.TargetID == m.ID && strings.Contains(d.Candidate.Content, "Beijing") {
				return m, d
			}
		}
	}
	t.Fatalf("no UTC preference superseded by a Beijing-time one among %q", utc)
	return memory.Memory{}, memory.Decision{}
}

// screenshots is where the browser test leaves a PNG of each main page
// for a reviewer: $HINDSIGHT_SCREENSHOTS, or a folder in the temp dir.
func screenshots(t *testing.T) string {
	dir := os.Getenv("HINDSIGHT_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "hindsight-console-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// In a real browser: find the UTC preference by search, open it, see its
// source episode and the Beijing-time decision that superseded it, undo
// that decision, and recall returns UTC first again.
func TestConsoleInABrowser(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("HINDSIGHT_REQUIRE_BROWSER") != "" {
			t.Fatal("chromium is not installed: scripts/install-tools.sh installs it (make test runs it)")
		}
		t.Skip("chromium is not installed (scripts/install-tools.sh)")
	}
	st := startTestDev(t, t.TempDir())
	defer st.Close()
	endExamples(t, st)
	utc, conflict := utcAndConflict(t, st, memory.DefaultTenant)
	if utc.Status != memory.StatusSuperseded {
		t.Fatalf("the UTC preference is %s before the undo, want superseded", utc.Status)
	}

	actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(bin), chromedp.Headless,
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 900))
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	if err := chromedp.Do(bctx); err != nil { // start the browser, tied to bctx
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancel := context.WithTimeout(bctx, 2*time.Minute)
	defer cancel()
	base := "http://" + st.http.Addr() + "/ui"
	shots := screenshots(t)
	shoot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return s
	}
	click := func(sel string) {
		t.Helper()
		if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
			t.Fatalf("click %s: %v", sel, err)
		}
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	if s := text("main"); !strings.Contains(s, "What the agent knows") || !strings.Contains(s, "Learned per day") {
		t.Errorf("overview:\n%s", s)
	}
	shoot("overview")

	// Search, as an agent would recall.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/memories"), chromedp.SendKeys(chromedp.CSS(`input[name="q"]`), "report timestamps UTC 报表 时间")); err != nil {
		t.Fatal(err)
	}
	click("form.filters button")
	list := text("table.list")
	if !strings.Contains(list, utc.Content) || !strings.Contains(list, "relevance") {
		t.Fatalf("the search did not find the UTC preference with its score breakdown:\n%s", list)
	}
	shoot("memories")

	click(`a[href$="/memories/` + utc.ID + `"]`)
	page := text("main")
	src, err := st.service.Episode(context.Background(), memory.DefaultTenant, utc.Sources[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{utc.Content, "Where it came from", src.Task, "conflicts", "Beijing"} {
		if !strings.Contains(page, want) {
			t.Errorf("the memory page lacks %q:\n%s", want, page)
		}
	}
	shoot("memory")

	click(`a[href*="what=undo&id=` + conflict.ID + `"]`)
	if s := text("main"); !strings.Contains(s, "Undo this decision?") {
		t.Fatalf("no confirmation:\n%s", s)
	}
	click("#confirm")
	if s := text("main"); !strings.Contains(s, "undo") || !strings.Contains(s, "Done") {
		t.Fatalf("after the undo:\n%s", s)
	}

	resp, err := st.service.Recall(context.Background(), memory.Query{Tenant: memory.DefaultTenant, Text: "which time zone should report timestamps use?"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) == 0 || !strings.Contains(resp.Results[0].Memory.Content, "UTC") || strings.Contains(resp.Results[0].Memory.Content, "Beijing") {
		t.Errorf("after the undo recall returns %v first, want a UTC preference", firstIDs(resp))
	}
	if m, err := st.runtime.Store.Memory(context.Background(), memory.DefaultTenant, utc.ID); err != nil || m.Status != memory.StatusLive {
		t.Errorf("after the undo the UTC preference is %s (%v), want live", m.Status, err)
	}

	for _, p := range []string{"episodes", "decisions"} {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"+p)); err != nil {
			t.Fatal(err)
		}
		if s := text("main"); !strings.Contains(s, map[string]string{"episodes": src.Task, "decisions": "undo"}[p]) {
			t.Errorf("%s page:\n%s", p, s)
		}
		shoot(p)
	}
	click(`a[href^="/ui/episodes/ep_"]`)
	shoot("episode")
	t.Logf("screenshots in %s", shots)
}

func firstIDs(r recall.Response) []string {
	var ids []string
	for _, x := range r.Results {
		ids = append(ids, x.Memory.ID+" "+x.Memory.Content)
	}
	return ids
}

// With a token file: a page without a session redirects to sign-in; a
// tenant's token sees nothing of another tenant's, by list or by ID; a
// POST without the CSRF token is refused.
func TestConsoleTenantsAndCSRF(t *testing.T) {
	dir := t.TempDir()
	st := startTestDevWith(t, dir, withTokens(t, dir, "acme acme-token-0123456789\nglobex globex-token-0123456789\n"))
	defer st.Close()
	reportSessions(t, st, "acme")
	utc, conflict := utcAndConflict(t, st, "acme")
	ep := memory.EpisodeID("acme", "report-a")
	base := "http://" + st.http.Addr() + "/ui"

	browser := func() *http.Client {
		jar, _ := cookiejar.New(nil)
		return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	get := func(c *http.Client, path string) (int, string, http.Header) {
		t.Helper()
		resp, err := c.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	// The sign-in form carries a CSRF token bound to the browser's cookie.
	signinCSRF := func(c *http.Client) string {
		t.Helper()
		_, body, _ := get(c, "/signin")
		m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("the sign-in form has no CSRF token:\n%s", body)
		}
		return m[1]
	}
	signIn := func(token string) *http.Client {
		t.Helper()
		c := browser()
		resp, err := c.PostForm(base+"/signin", url.Values{"token": {token}, "next": {"/ui/memories"}, "csrf": {signinCSRF(c)}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/memories" {
			t.Fatalf("sign-in answered %d → %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		ck := resp.Header.Get("Set-Cookie")
		if !strings.Contains(ck, "HttpOnly") || !strings.Contains(ck, "SameSite=Strict") {
			t.Errorf("session cookie %q must be HttpOnly and SameSite=Strict", ck)
		}
		return c
	}

	code, _, h := get(browser(), "/memories")
	if code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/ui/signin") {
		t.Errorf("without a session: %d → %q, want a redirect to sign-in", code, h.Get("Location"))
	}
	if code, _, _ := get(browser(), "/memories/"+utc.ID); code != http.StatusSeeOther {
		t.Errorf("a memory without a session: %d", code)
	}
	c := browser()
	if resp, err := c.PostForm(base+"/signin", url.Values{"token": {"not-a-real-token-at-all"}, "csrf": {signinCSRF(c)}}); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong token: %v %v", err, resp.StatusCode)
	}
	if resp, err := browser().PostForm(base+"/signin", url.Values{"token": {"acme-token-0123456789"}}); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("a sign-in without the console's form (login CSRF): %v %v, want 403", err, resp.StatusCode)
	}
	// Reproduction: a DNS-rebinding page reached the console (every
	// memory, episode and decision), the MCP endpoint and the metrics
	// with its own name as the Host. Every path of the listener answers
	// 421 for a Host it does not serve.
	_, port, _ := net.SplitHostPort(st.http.Addr())
	for _, path := range []string{"/ui/memories", "/ui/episodes", "/ui/decisions", "/ui/signin", "/mcp", "/metrics", "/healthz"} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+st.http.Addr()+path, nil)
		req.Host = "attacker.example:" + port
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("GET %s with Host attacker.example: %d, want 421", path, resp.StatusCode)
		}
	}

	globex := signIn("globex-token-0123456789")
	code, body, h := get(globex, "/memories")
	if code != 200 || strings.Contains(body, "UTC") || strings.Contains(body, utc.ID) {
		t.Errorf("globex sees acme's memories (%d):\n%s", code, body)
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "script-src") || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("security headers: CSP %q, nosniff %q", csp, h.Get("X-Content-Type-Options"))
	}
	for _, p := range []string{"/memories/" + utc.ID, "/episodes/" + ep, "/confirm?what=undo&id=" + conflict.ID} {
		if code, _, _ := get(globex, p); code != http.StatusNotFound {
			t.Errorf("globex GET %s: %d, want 404", p, code)
		}
	}
	for _, p := range []string{"/", "/episodes", "/decisions"} {
		if _, body, _ := get(globex, p); strings.Contains(body, "revenue report") || strings.Contains(body, "Beijing") {
			t.Errorf("globex sees acme's data on %s", p)
		}
	}

	acme := signIn("acme-token-0123456789")
	code, page, _ := get(acme, "/memories/"+utc.ID)
	if code != 200 || !strings.Contains(page, "Reports") && !strings.Contains(page, "UTC") {
		t.Fatalf("acme's own memory: %d", code)
	}
	pin := func(client *http.Client, csrf string) int {
		form := url.Values{"pinned": {"true"}, "nonce": {"n1"}}
		if csrf != "" {
			form.Set("csrf", csrf)
		}
		resp, err := client.PostForm(base+"/memories/"+utc.ID+"/pin", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := pin(acme, ""); code != http.StatusForbidden {
		t.Errorf("a POST without the CSRF token: %d, want 403", code)
	}
	if code := pin(acme, "forged"); code != http.StatusForbidden {
		t.Errorf("a POST with a forged CSRF token: %d, want 403", code)
	}
	if m, _ := st.runtime.Store.Memory(context.Background(), "acme", utc.ID); m.Pinned {
		t.Fatal("a refused POST pinned the memory")
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if csrf == nil {
		t.Fatal("no CSRF token in the memory page's forms")
	}
	if code := pin(acme, csrf[1]); code != 200 {
		t.Errorf("pin with the CSRF token: %d", code)
	}
	if m, _ := st.runtime.Store.Memory(context.Background(), "acme", utc.ID); !m.Pinned {
		t.Error("the pin did not take")
	}
	// A globex session's CSRF token is not acme's.
	if code := pin(globex, csrf[1]); code != http.StatusForbidden && code != http.StatusNotFound {
		t.Errorf("globex pinning acme's memory with acme's CSRF token: %d", code)
	}
}
