package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"net/http/httptest"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hindsight-memory/hindsight/auth"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/recall"
	"github.com/hindsight-memory/hindsight/service"
)

// TestRandomisedProbesOnEveryPath fills a tenant with the private
// memories and sessions of six users and four agents, each text carrying
// its owner's marker (own-u3, own-a1), beside shared memories, then asks,
// from user-bound tokens (some binding agents) and a tenant-wide token,
// hundreds of random questions on every path that shows memory text:
// memory_recall with and without user and agent arguments, with recent
// sessions and source references, resources/list (every page),
// resources/read of every memory and episode (others' included), the
// memories template with random variables, the recall_context prompt and
// completion/complete. No answer may hold a marker of another user, or of
// an agent the token does not bind; and the probes must have seen the
// caller's own and shared texts, so that they cannot pass by finding
// nothing.
func TestRandomisedProbesOnEveryPath(t *testing.T) {
	ctx := context.Background()
	store := memory.NewMemStore()
	eng, err := recall.New(recall.Config{}, recall.Deps{Memories: store, Episodes: store, Events: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	svc := service.New(service.Config{}, store, nil, eng, nil)

	const users, agents = 6, 4
	type caller struct {
		token  string
		user   string
		agents []string
	}
	var callers []caller
	var lines strings.Builder
	for u := range users {
		c := caller{token: fmt.Sprintf("probe-token-user-%d-0123456789", u), user: fmt.Sprintf("u%d", u)}
		if u < agents {
			c.agents = []string{fmt.Sprintf("a%d", u)}
		}
		line := "acme " + c.token + " " + c.user
		if len(c.agents) > 0 {
			line += " agents=" + strings.Join(c.agents, ",")
		}
		lines.WriteString(line + "\n")
		callers = append(callers, c)
	}
	const tenantToken = "probe-token-tenant-wide-0123456789"
	lines.WriteString("acme " + tenantToken + "\n")
	callers = append(callers, caller{token: tenantToken})
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := auth.LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(HTTPHandler(New(svc, Options{}), HTTPOptions{Path: "/mcp", Tokens: tokens,
		Sessions: NewSessions([]byte("0123456789abcdef0123456789abcdef")).Persist(store)}))
	t.Cleanup(srv.Close)

	// What is stored: per user and agent, private memories on topics every
	// probe may ask about, and sessions; shared memories learned from the
	// users' sessions.
	rng := rand.New(rand.NewPCG(36, 2026))
	topics := []string{"refund approvals", "invoice exports", "deploy windows", "report timestamps", "database access", "support replies", "release notes", "cache settings"}
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	var ms []memory.Memory
	var ids []string
	n := 0
	mem := func(scope memory.Scope, marker, topic string, sources ...string) {
		n++
		m := memory.Memory{ID: fmt.Sprintf("m-%03d", n), Tenant: "acme", Version: 1, Kind: memory.Kinds[n%len(memory.Kinds)],
			Content: fmt.Sprintf("For %s, %s prefers step %d first.", topic, marker, n), Scope: scope, Status: memory.StatusLive,
			Sources: sources, Confidence: 0.6, CreatedAt: at, UpdatedAt: at.Add(time.Duration(n) * time.Minute)}
		ms = append(ms, m)
		ids = append(ids, m.ID)
	}
	var episodes []string
	for u := range users {
		owner := fmt.Sprintf("u%d", u)
		for i, topic := range topics {
			mem(memory.UserScope(owner), "own-"+owner, topic)
			session := fmt.Sprintf("s-%s-%d", owner, i)
			ep := memory.Episode{ID: memory.EpisodeID("acme", session), Tenant: "acme", SessionID: session, UserID: owner,
				Task: fmt.Sprintf("Sort out %s for own-%s", topic, owner), Outcome: memory.OutcomeSuccess, Status: memory.EpisodeLive,
				Entities: []string{"billing"}, Steps: []string{"checked own-" + owner + " notes"}, StartedAt: at, EndedAt: at.Add(time.Duration(u*10+i) * time.Minute)}
			if err := store.PutEpisode(ctx, ep); err != nil {
				t.Fatal(err)
			}
			if err := store.AppendEvents(ctx, []memory.Event{{ID: "ev-" + session, Tenant: "acme", SessionID: session, UserID: owner, Role: memory.RoleUser,
				Content: "own-" + owner + " asks about " + topic, TS: at}}); err != nil {
				t.Fatal(err)
			}
			episodes = append(episodes, ep.ID)
			if i%3 == 0 {
				mem(memory.SharedScope, "the team", topic, ep.ID) // learned from the user's session
			}
		}
	}
	for a := range agents {
		owner := fmt.Sprintf("a%d", a)
		for _, topic := range topics[:4] {
			mem(memory.AgentScope(owner), "own-"+owner, topic)
		}
	}
	if err := store.PutMemories(ctx, ms); err != nil {
		t.Fatal(err)
	}

	markerRE := regexp.MustCompile(`own-([ua]\d)`)
	type tally struct{ own, shared, calls int }
	var total tally
	for _, c := range callers {
		c := c
		sees := map[string]bool{c.user: c.user != ""}
		for _, a := range c.agents {
			sees[a] = true
		}
		cl := sdk.NewClient(&sdk.Implementation{Name: "probes-test", Version: "test"}, nil)
		s, err := cl.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: BearerClient(c.token),
			DisableStandaloneSSE: true, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: legacyProtocol})
		if err != nil {
			t.Fatal(err)
		}
		who := c.user
		if who == "" {
			who = "the tenant-wide token"
		}
		// A tenant-wide token acts for the user and agent it names (the
		// tenant's authority), and for nobody when it names none; a
		// user-bound token only ever for its own.
		check := func(path, text string, named ...string) {
			t.Helper()
			total.calls++
			for _, m := range markerRE.FindAllStringSubmatch(text, -1) {
				if !sees[m[1]] && !(c.user == "" && slices.Contains(named, m[1])) {
					t.Errorf("%s, on %s, was shown %s's text: …%s…", who, path, m[1], clip(text, m[0]))
					return
				}
				total.own++
			}
			if strings.Contains(text, "the team prefers") {
				total.shared++
			}
		}
		for range 40 {
			topic := topics[rng.IntN(len(topics))]
			args := map[string]any{"query": "what is preferred for " + topic + "?", "top_k": 10, "recent_sessions": 3, "project": "billing"}
			switch rng.IntN(4) {
			case 1: // naming another user, or an agent it may not act as, is refused
				args["user_id"] = fmt.Sprintf("u%d", rng.IntN(users))
			case 2:
				args["agent_id"] = fmt.Sprintf("a%d", rng.IntN(agents))
			case 3:
				args["include_cold"], args["include_superseded"], args["with_events"] = true, true, true
			}
			text, _ := call(t, s, ToolRecall, args)
			check("memory_recall "+fmt.Sprint(args), text, fmt.Sprint(args["user_id"]), fmt.Sprint(args["agent_id"]))

			id := ids[rng.IntN(len(ids))]
			if res, err := s.ReadResource(ctx, &sdk.ReadResourceParams{URI: MemoryURI(id)}); err == nil {
				check("resources/read "+id, resourceText(res))
			}
			ep := episodes[rng.IntN(len(episodes))]
			if res, err := s.ReadResource(ctx, &sdk.ReadResourceParams{URI: EpisodeURIPrefix + ep}); err == nil {
				check("resources/read "+ep, resourceText(res))
			}
			named := fmt.Sprintf("u%d", rng.IntN(users))
			uri := fmt.Sprintf("hindsight://memories?kind=%s&user_id=%s", memory.Kinds[rng.IntN(len(memory.Kinds))], named)
			if rng.IntN(2) == 0 {
				uri = "hindsight://memories?project=billing"
			}
			if res, err := s.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri}); err == nil {
				check("resources/read "+uri, resourceText(res), named)
			}
			if res, err := s.GetPrompt(ctx, &sdk.GetPromptParams{Name: PromptRecall, Arguments: map[string]string{"query": "how do we handle " + topic}}); err == nil {
				raw, _ := json.Marshal(res)
				check("prompts/get "+PromptRecall, string(raw))
			}
		}
		var cursor string
		for page := 0; page < 50; page++ {
			res, err := s.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(res)
			check("resources/list", string(raw))
			if cursor = res.NextCursor; cursor == "" {
				break
			}
		}
		for _, arg := range []string{"user_id", "project", "task_type", "id"} {
			res, err := s.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/resource", URI: MemoriesURITemplate},
				Argument: sdk.CompleteParamsArgument{Name: arg}})
			if err != nil {
				t.Fatal(err)
			}
			if arg == "id" {
				for _, v := range res.Completion.Values {
					for _, m := range ms {
						if m.ID == v && m.Scope.Kind() != memory.ScopeShared && !sees[m.Scope.Owner()] {
							t.Errorf("%s was offered %s's memory ID %s", who, m.Scope.Owner(), v)
						}
					}
				}
			}
		}
		s.Close()
	}
	t.Logf("%d answers: %d texts of the caller's own or its agents', %d shared", total.calls, total.own, total.shared)
	if total.own < 100 || total.shared < 50 {
		t.Fatalf("the probes saw %d own and %d shared texts: too few to show anything", total.own, total.shared)
	}
}

func resourceText(res *sdk.ReadResourceResult) string {
	var b strings.Builder
	for _, c := range res.Contents {
		b.WriteString(c.Text)
	}
	return b.String()
}

func clip(text, around string) string {
	i := strings.Index(text, around)
	return text[max(0, i-120):min(len(text), i+60)]
}
