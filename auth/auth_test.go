package auth

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestTokensFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	writeFile(t, path, "# tenant token [user] [agents=a,b]\nacme acme-wide-token-0123\nacme alice-token-01234567 alice agents=support-bot,triage\nacme bots-token-012345678 agents=nightly\n")
	tk, err := LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	for token, want := range map[string]Identity{
		"acme-wide-token-0123":     {Tenant: "acme"},
		"alice-token-01234567":     {Tenant: "acme", UserID: "alice", Agents: []string{"support-bot", "triage"}},
		"bots-token-012345678":     {Tenant: "acme", Agents: []string{"nightly"}},
		"not-a-token-in-the-file1": {},
	} {
		got, ok := tk.Identity(token)
		if ok != (want.Tenant != "") || got.Tenant != want.Tenant || got.UserID != want.UserID || strings.Join(got.Agents, ",") != strings.Join(want.Agents, ",") {
			t.Errorf("Identity(%q) = %+v %v, want %+v", token, got, ok, want)
		}
	}
	for name, line := range map[string]string{
		"a short token":          "acme short",
		"a bad user":             "acme a-long-enough-token-0 user:x agents=",
		"agents twice":           "acme a-long-enough-token-0 u agents=a agents=b",
		"a bad agent":            "acme a-long-enough-token-0 u agents=a,,b",
		"a word after the agent": "acme a-long-enough-token-0 u agents=a extra",
		"a bad tenant":           "ac/me a-long-enough-token-0",
	} {
		p := filepath.Join(t.TempDir(), "tokens")
		writeFile(t, p, line+"\n")
		if _, err := LoadTokens(p); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%s: LoadTokens = %v, want an error naming line 1", name, err)
		}
	}
}

// A token removed from the file stops working at the next request, and a
// file that no longer reads serves no token until it is fixed.
func TestTokensFileIsReadAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	writeFile(t, path, "acme alice-token-01234567 alice\nacme bob-token-0123456789 bob\n")
	tk, err := LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("a key of the console, 16+")
	ref := tk.Ref(key, "alice-token-01234567")
	if id, ok := tk.ByRef(key, ref); !ok || id.UserID != "alice" {
		t.Fatalf("ByRef = %+v %v", id, ok)
	}
	// Rewritten at once, with a line of the same length: the content is
	// compared while the file's time is recent.
	writeFile(t, path, "acme carol-token-0123456 carol\nacme bob-token-0123456789 bob\n")
	if _, ok := tk.Identity("alice-token-01234567"); ok {
		t.Error("a token removed from the file still works")
	}
	if _, ok := tk.ByRef(key, ref); ok {
		t.Error("a session of a token removed from the file still works")
	}
	if id, ok := tk.Identity("carol-token-0123456"); !ok || id.UserID != "carol" {
		t.Errorf("a token added to the file: %+v %v", id, ok)
	}
	writeFile(t, path, "acme bob-token-0123456789 bob\nthis line is wrong\n")
	if _, ok := tk.Identity("bob-token-0123456789"); ok {
		t.Error("a file that does not read still serves tokens")
	}
	writeFile(t, path, "acme bob-token-0123456789 bob\n")
	if _, ok := tk.Identity("bob-token-0123456789"); !ok {
		t.Error("the file was fixed, yet its token does not work")
	}
}

// store is a tenant with two users' sessions and memories.
func store(t *testing.T) *memory.MemStore {
	t.Helper()
	ctx := context.Background()
	s := memory.NewMemStore()
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	ev := func(id, session, user string) memory.Event {
		return memory.Event{ID: id, Tenant: "acme", SessionID: session, UserID: user, Role: memory.RoleUser, Content: "x", TS: at}
	}
	if err := s.AppendEvents(ctx, []memory.Event{ev("1", "S-bob", "bob"), ev("2", "S-alice", "alice"), ev("3", "S-platform", ""), ev("4", "S-mixed", ""), ev("5", "S-mixed", "alice")}); err != nil {
		t.Fatal(err)
	}
	mem := func(id string, scope memory.Scope) memory.Memory {
		return memory.Memory{ID: id, Tenant: "acme", Version: 1, Kind: memory.KindFact, Content: id, Scope: scope, Status: memory.StatusLive, CreatedAt: at, UpdatedAt: at}
	}
	if err := s.PutMemories(ctx, []memory.Memory{mem("m-bob", memory.UserScope("bob")), mem("m-alice", memory.UserScope("alice")),
		mem("m-shared", memory.SharedScope), mem("m-bot", memory.AgentScope("support-bot")), mem("m-other-bot", memory.AgentScope("billing-bot"))}); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAuthorize(t *testing.T) {
	s := store(t)
	alice := WithIdentity(context.Background(), Identity{Tenant: "acme", UserID: "alice", Agents: []string{"support-bot"}})
	wide := WithTenant(context.Background(), "acme")
	for _, c := range []struct {
		name string
		ctx  context.Context
		act  Action
		code string // "" when allowed
	}{
		{"alice reads a shared memory", alice, Action{Kind: ReadMemory, ID: "m-shared"}, ""},
		{"alice reads her agent's memory", alice, Action{Kind: ReadMemory, ID: "m-bot"}, ""},
		{"alice reads bob's memory", alice, Action{Kind: ReadMemory, ID: "m-bob"}, memory.ENOTFOUND},
		{"alice reads another agent's memory", alice, Action{Kind: ChangeMemory, ID: "m-other-bot"}, memory.ENOTFOUND},
		{"alice forgets her memory", alice, Action{Kind: ForgetMemory, ID: "m-alice"}, ""},
		{"alice forgets her agent's memory", alice, Action{Kind: ForgetMemory, ID: "m-bot"}, ""},
		{"alice forgets a shared memory", alice, Action{Kind: ForgetMemory, ID: "m-shared"}, memory.EINVALID},
		{"alice releases a shared memory", alice, Action{Kind: Release, ID: "m-shared"}, memory.EINVALID},
		{"alice forgets her session", alice, Action{Kind: ForgetSession, ID: "S-alice"}, ""},
		{"alice forgets bob's session", alice, Action{Kind: ForgetSession, ID: "S-bob"}, memory.ENOTFOUND},
		{"alice forgets a platform session", alice, Action{Kind: ForgetSession, ID: "S-platform"}, memory.ENOTFOUND},
		{"alice forgets bob", alice, Action{Kind: ForgetUser, ID: "bob"}, memory.EINVALID},
		{"alice forgets herself", alice, Action{Kind: ForgetUser, ID: "alice"}, ""},
		{"alice writes into her session", alice, Action{Kind: WriteSession, ID: "S-alice", User: "alice"}, ""},
		{"alice writes into a new session", alice, Action{Kind: WriteSession, ID: "S-new", User: "alice"}, ""},
		{"alice writes into bob's session", alice, Action{Kind: WriteSession, ID: "S-bob", User: "alice"}, memory.ECONFLICT},
		{"alice writes into a platform session", alice, Action{Kind: WriteSession, ID: "S-platform", User: "alice"}, memory.ECONFLICT},
		{"the platform writes into bob's session for alice", wide, Action{Kind: WriteSession, ID: "S-bob", User: "alice"}, memory.ECONFLICT},
		{"the platform writes into bob's session for no one", wide, Action{Kind: WriteSession, ID: "S-bob"}, ""},
		{"the platform names the user of its session", wide, Action{Kind: WriteSession, ID: "S-mixed", User: "alice"}, ""},
		{"the platform forgets bob's session", wide, Action{Kind: ForgetSession, ID: "S-bob"}, ""},
		{"the platform reads bob's memory", wide, Action{Kind: ReadMemory, ID: "m-bob"}, ""},
	} {
		err := Authorize(c.ctx, s, "acme", c.act)
		if memory.ErrorCode(err) != c.code {
			t.Errorf("%s: %v, want code %q", c.name, err, c.code)
		}
	}
	// A tenant-wide caller naming no user writes for the session's user.
	if u, err := SessionWriter(wide, s, "acme", "S-bob", ""); err != nil || u != "bob" {
		t.Errorf("SessionWriter for no one into bob's session = %q %v, want bob", u, err)
	}
}

func TestActFor(t *testing.T) {
	for _, c := range []struct {
		id                  Identity
		user, agent         string
		wantUser, wantAgent string
		wantErr             string
	}{
		{id: Identity{Tenant: "acme"}, user: "bob", agent: "x", wantUser: "bob", wantAgent: "x"},
		{id: Identity{Tenant: "acme", UserID: "alice"}, wantUser: "alice"},
		{id: Identity{Tenant: "acme", UserID: "alice"}, user: "bob", wantErr: `acts for user "alice" only`},
		{id: Identity{Tenant: "acme", UserID: "alice"}, agent: "support-bot", wantErr: "for no agent"},
		{id: Identity{Tenant: "acme", UserID: "alice", Agents: []string{"support-bot"}}, wantUser: "alice", wantAgent: "support-bot"},
		{id: Identity{Tenant: "acme", UserID: "alice", Agents: []string{"a", "b"}}, agent: "b", wantUser: "alice", wantAgent: "b"},
		{id: Identity{Tenant: "acme", UserID: "alice", Agents: []string{"a", "b"}}, agent: "c", wantErr: `acts as "a", "b" only`},
		{id: Identity{Tenant: "acme", Agents: []string{"nightly"}}, agent: "other", wantErr: `acts as "nightly" only`},
	} {
		u, a, err := ActFor(WithIdentity(context.Background(), c.id), c.user, c.agent)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("ActFor(%+v, %q, %q) = %v, want an error saying %q", c.id, c.user, c.agent, err, c.wantErr)
			}
			continue
		}
		if err != nil || u != c.wantUser || a != c.wantAgent {
			t.Errorf("ActFor(%+v, %q, %q) = %q %q %v, want %q %q", c.id, c.user, c.agent, u, a, err, c.wantUser, c.wantAgent)
		}
	}
	alice := WithIdentity(context.Background(), Identity{Tenant: "acme", UserID: "alice", Agents: []string{"support-bot"}})
	for scope, ok := range map[memory.Scope]bool{"shared": true, "user:alice": true, "user:bob": false, "agent:support-bot": true, "agent:billing-bot": false} {
		if err := CheckScope(alice, scope); (err == nil) != ok {
			t.Errorf("CheckScope(alice, %s) = %v", scope, err)
		}
	}
}
