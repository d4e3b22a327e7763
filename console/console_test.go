package console

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/auth"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/recall"
	"github.com/hindsight-memory/hindsight/service"
)

func TestWordDiff(t *testing.T) {
	got := wordDiff("Reports use UTC timestamps.", "Reports use Beijing time timestamps.")
	var b strings.Builder
	for _, p := range got {
		b.WriteString(string(p.Op) + "[" + p.Text + "]")
	}
	if want := " [Reports use ]-[UTC ]+[Beijing time ] [timestamps.]"; b.String() != want {
		t.Errorf("diff %s, want %s", b.String(), want)
	}
	if zh := wordDiff("报表用UTC", "报表用北京时间"); len(zh) < 2 || zh[0].Text != "报表用" {
		t.Errorf("a Chinese diff keeps the shared characters: %+v", zh)
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"/ui/memories?q=x":   "/ui/memories?q=x",
		"//evil.example/":    "/ui/",
		"https://evil":       "/ui/",
		"/ui/\r\nSet-Cookie": "/ui/",
		"/other":             "/ui/",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

// noService is a Service for pages that do not reach it.
type noService struct{}

var errNoService = errors.New("not in this test")

func (noService) Recall(context.Context, memory.Query) (recall.Response, error) {
	return recall.Response{}, errNoService
}
func (noService) Correct(context.Context, string, string, string, bool, string) (memory.Decision, bool, error) {
	return memory.Decision{}, false, errNoService
}
func (noService) Pin(context.Context, string, string, bool, string) (memory.Decision, bool, error) {
	return memory.Decision{}, false, errNoService
}
func (noService) Undo(context.Context, string, string, bool) (memory.Decision, error) {
	return memory.Decision{}, errNoService
}
func (noService) Forget(context.Context, service.ForgetRequest) (service.ForgetReceipt, error) {
	return service.ForgetReceipt{}, errNoService
}

// A cookie signed with another key, or past its time, is no session.
func TestSessionCookies(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("acme acme-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tk, err := auth.LoadTokens(tokens)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	mk := func(key string) *Console {
		c, err := New(Options{Service: noService{}, Store: memory.NewMemStore(), Tokens: tk, Key: []byte(key), Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c, other := mk("the-deployment-key-1"), mk("another-deployment-key")
	signin := httptest.NewRequest("POST", "/ui/signin", strings.NewReader(url.Values{"token": {"acme-token-0123456789"}}.Encode()))
	signin.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	c.ServeHTTP(rec, signin)
	cookies := rec.Result().Cookies()
	if rec.Code != http.StatusSeeOther || len(cookies) != 1 {
		t.Fatalf("sign-in: %d, cookies %v", rec.Code, cookies)
	}
	get := func(c *Console) int {
		r := httptest.NewRequest("GET", "/ui/memories", nil)
		r.AddCookie(cookies[0])
		rec := httptest.NewRecorder()
		c.ServeHTTP(rec, r)
		return rec.Code
	}
	if code := get(c); code != http.StatusOK {
		t.Errorf("with its own cookie: %d", code)
	}
	if code := get(other); code != http.StatusSeeOther {
		t.Errorf("a cookie signed with another key: %d, want a redirect to sign-in", code)
	}
	now = now.Add(sessionLife + time.Minute)
	if code := get(c); code != http.StatusSeeOther {
		t.Errorf("an expired cookie: %d, want a redirect to sign-in", code)
	}
}
