package recall

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// TestRecallNeverCrossesUsers fills one tenant with the private memories
// of many users, written from the same few templates so that every user's
// memories match every other user's queries word for word, plus shared
// ones; then asks 1,000 randomised questions on behalf of random users (and
// some on behalf of nobody), with random filters, and counts the results
// that belong to someone else. There must be none, and each user must
// still find their own memories and the shared ones.
func TestRecallNeverCrossesUsers(t *testing.T) {
	const (
		tenant = "desk"
		users  = 40
		probes = 1000
	)
	e := newEnv(t, Config{})
	r := rand.New(rand.NewPCG(20, 26))
	channels := []string{"email", "phone", "WeChat", "SMS", "letter"}
	templates := []string{
		"The user prefers to be contacted by %s, never otherwise.",
		"Send the user's invoices by %s.",
		"The user's replacement orders ship by %s.",
		"用户希望通过%s联系。",
	}
	var ms []memory.Memory
	for u := range users {
		for k, tpl := range templates {
			m := mem(tenant, fmt.Sprintf("u%02d-%d", u, k), fmt.Sprintf(tpl, channels[r.IntN(len(channels))]), 0)
			m.Kind = []memory.Kind{memory.KindPreference, memory.KindFact, memory.KindRule}[k%3]
			m.Scope = memory.UserScope(fmt.Sprintf("cust-%02d", u))
			ms = append(ms, m)
		}
	}
	for k, c := range channels {
		m := mem(tenant, fmt.Sprintf("shared-%d", k), "Contact by "+c+" needs the ticket number in the first line.", 0)
		m.Kind = memory.KindRule
		ms = append(ms, m)
	}
	e.write(t, ms...)

	queries := []string{
		"how does the customer want to be contacted?", "send invoices", "replacement orders shipping",
		"联系方式", "email or phone?", "contact by WeChat", "ticket number",
	}
	crossed, own, shared := 0, 0, 0
	for i := range probes {
		q := memory.Query{Tenant: tenant, Text: queries[r.IntN(len(queries))], TopK: 1 + r.IntN(20)}
		user := ""
		if i%10 != 0 { // one probe in ten acts for nobody
			user = fmt.Sprintf("cust-%02d", r.IntN(users))
			q.UserID = user
		}
		if r.IntN(3) == 0 {
			q.IncludeCold, q.IncludeSuperseded = true, true
		}
		if r.IntN(4) == 0 {
			q.Kinds = []memory.Kind{memory.KindPreference, memory.KindRule}
		}
		for _, res := range e.recall(t, q).Results {
			switch s := res.Memory.Scope.Norm(); {
			case s == memory.SharedScope:
				shared++
			case user != "" && s == memory.UserScope(user):
				own++
			default:
				crossed++
				if crossed <= 5 {
					t.Errorf("probe %d for %q (%q) returned %s of %s: %s", i, user, q.Text, res.Memory.ID, s, res.Memory.Content)
				}
			}
		}
	}
	t.Logf("%d probes: %d results of the asking user, %d shared, %d of another user", probes, own, shared, crossed)
	if crossed != 0 {
		t.Fatalf("%d results of %d probes belonged to another user", crossed, probes)
	}
	if own == 0 || shared == 0 {
		t.Fatalf("users found %d of their own memories and %d shared ones; want both", own, shared)
	}
	// The context block says whose each memory is.
	resp := e.recall(t, memory.Query{Tenant: tenant, Text: "contact by email", UserID: "cust-03", TopK: 20})
	if !strings.Contains(resp.Text, "about this user") || !strings.Contains(resp.Text, "team knowledge") {
		t.Fatalf("the block does not label scopes:\n%s", resp.Text)
	}
}

// Reproduction: a shared lesson learned from alice's session carried that
// session's task in recall's source references, so bob's recall returned
// "Refund order A-777 for Alice …". Another user's session is now its ID
// alone, withheld, on both paths, with no events; alice, and a caller of
// the session's no-user kind, see what they saw.
func TestProvenanceShowsNoOtherUsersSession(t *testing.T) {
	for _, path := range []string{"cached", "stateless"} {
		t.Run(path, func(t *testing.T) {
			stateless = path == "stateless"
			defer func() { stateless = false }()
			e := newEnv(t, Config{})
			ctx := context.Background()
			sess := func(id, user, task string) string {
				ep := memory.Episode{ID: memory.EpisodeID("desk", id), Tenant: "desk", SessionID: id, UserID: user, Task: task,
					Outcome: memory.OutcomeSuccess, Status: memory.EpisodeLive, EndedAt: base.Add(-time.Hour)}
				if err := e.store.PutEpisode(ctx, ep); err != nil {
					t.Fatal(err)
				}
				if err := e.store.AppendEvents(ctx, []memory.Event{{ID: "ev-" + id, Tenant: "desk", SessionID: id, UserID: user, Role: memory.RoleUser, Content: task, TS: base.Add(-2 * time.Hour)}}); err != nil {
					t.Fatal(err)
				}
				return ep.ID
			}
			alice := sess("S-alice", "alice", "Refund order A-777 for Alice Liddell")
			team := sess("S-team", "", "Close the refund queue for the day")
			lesson := mem("desk", "refund-lesson", "Refunds over 500 EUR need a second approver in the refund tool.", time.Hour)
			lesson.Sources = []string{alice, team}
			e.write(t, lesson)

			for _, c := range []struct {
				user      string
				seesAlice bool
			}{{"bob", false}, {"", false}, {"alice", true}} {
				r := e.recall(t, memory.Query{Tenant: "desk", Text: "refunds second approver", UserID: c.user, WithEvents: true})
				if len(r.Results) != 1 {
					t.Fatalf("%q: results %v", c.user, ids(r))
				}
				res := r.Results[0]
				refs := map[string]memory.EpisodeRef{}
				for _, ref := range res.Episodes {
					refs[ref.ID] = ref
				}
				a, tm := refs[alice], refs[team]
				if tm.Task == "" || tm.Withheld {
					t.Errorf("%q: the session of no user is withheld: %+v", c.user, tm)
				}
				if c.seesAlice {
					if a.Task == "" || a.Withheld || !slices.Contains(res.EventIDs, "ev-S-alice") {
						t.Errorf("alice does not see her own session: %+v, events %v", a, res.EventIDs)
					}
					continue
				}
				if !a.Withheld || a.Task != "" || a.SessionID != "" || slices.Contains(res.EventIDs, "ev-S-alice") ||
					strings.Contains(r.Text, "Alice Liddell") || strings.Contains(fmt.Sprint(res), "Alice Liddell") {
					t.Errorf("%q sees alice's session: %+v, events %v\n%s", c.user, a, res.EventIDs, r.Text)
				}
			}
		})
	}
}
