package console

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// TestRandomisedConsoleProbes: six users' private memories, sessions and
// decisions, marked by owner (own-u3), beside shared memories learned from
// their sessions; each user signed in to the console opens the lists of
// memories, episodes and decisions with random filters, and random
// memory and episode pages, others' included. No page shows another
// user's text, and the pages did show the user's own and shared ones.
func TestRandomisedConsoleProbes(t *testing.T) {
	ctx := context.Background()
	store := memory.NewMemStore()
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	const users = 6
	var tokens strings.Builder
	var memIDs, epIDs []string
	n := 0
	for u := range users {
		owner := fmt.Sprintf("u%d", u)
		fmt.Fprintf(&tokens, "acme console-probe-%s-0123456789 %s\n", owner, owner)
		for i, topic := range []string{"refunds", "invoices", "deploys", "reports"} {
			sess := fmt.Sprintf("S-%s-%d", owner, i)
			epID := memory.EpisodeID("acme", sess)
			if err := store.AppendEvents(ctx, []memory.Event{{ID: "e-" + sess, Tenant: "acme", SessionID: sess, UserID: owner, Role: memory.RoleUser,
				Content: "own-" + owner + " asks about " + topic, TS: at}}); err != nil {
				t.Fatal(err)
			}
			if err := store.PutEpisode(ctx, memory.Episode{ID: epID, Tenant: "acme", SessionID: sess, UserID: owner, TaskType: "support",
				Task: "Sort out " + topic + " for own-" + owner, Outcome: memory.OutcomeSuccess, Status: memory.EpisodeLive, StartedAt: at, EndedAt: at.Add(time.Duration(n) * time.Minute)}); err != nil {
				t.Fatal(err)
			}
			epIDs = append(epIDs, epID)
			for _, m := range []memory.Memory{
				{Scope: memory.UserScope(owner), Content: fmt.Sprintf("For %s, own-%s prefers option %d.", topic, owner, n)},
				{Scope: memory.SharedScope, Content: fmt.Sprintf("For %s, the team prefers option %d.", topic, n)},
			} {
				n++
				m.ID, m.Tenant, m.Version, m.Kind, m.Status, m.Confidence = fmt.Sprintf("m-%03d", n), "acme", 1, memory.KindFact, memory.StatusLive, 0.6
				m.TaskType, m.Sources, m.CreatedAt, m.UpdatedAt, m.ValidFrom = "support", []string{epID}, at, at, at
				if err := store.PutMemories(ctx, []memory.Memory{m}); err != nil {
					t.Fatal(err)
				}
				if err := store.LogDecision(ctx, memory.Decision{ID: "d-" + m.ID, Tenant: "acme", Action: memory.ActionStore, CreatedAt: at, After: []memory.Memory{m}}); err != nil {
					t.Fatal(err)
				}
				memIDs = append(memIDs, m.ID)
			}
		}
	}
	tk := tokensOf(t, writeTokens(t, tokens.String()))
	srv, _ := consoleServer(t, Options{Service: &recordingService{store: store}, Store: store, Tokens: tk})
	rng := rand.New(rand.NewPCG(36, 11))
	marker := regexp.MustCompile(`own-(u\d)`)
	own, shared, pages := 0, 0, 0
	for u := range users {
		me := fmt.Sprintf("u%d", u)
		b := newBrowser(t, srv)
		b.signIn(fmt.Sprintf("console-probe-%s-0123456789", me))
		for range 30 {
			var path string
			switch rng.IntN(5) {
			case 0:
				path = "/ui/memories?task_type=support&kind=fact"
			case 1:
				path = "/ui/episodes?task_type=support"
			case 2:
				path = "/ui/decisions"
			case 3:
				path = "/ui/memories/" + memIDs[rng.IntN(len(memIDs))]
			default:
				path = "/ui/episodes/" + epIDs[rng.IntN(len(epIDs))]
			}
			p := b.get(path)
			pages++
			for _, m := range marker.FindAllStringSubmatch(p.body, -1) {
				if m[1] != me {
					i := strings.Index(p.body, m[0])
					t.Errorf("%s on %s (%d) was shown %s's text: …%s…", me, path, p.code, m[1], p.body[max(0, i-120):min(len(p.body), i+40)])
					break
				}
				own++
			}
			shared += strings.Count(p.body, "the team prefers")
		}
	}
	t.Logf("%d pages: %d own texts, %d shared", pages, own, shared)
	if own < 50 || shared < 50 {
		t.Fatalf("the pages showed %d own and %d shared texts: too few to show anything", own, shared)
	}
}
