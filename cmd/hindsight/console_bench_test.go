package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// BenchmarkConsolePages renders each console page for a tenant of 10,000
// memories on the embedded stack (chDB): go test -run '^$' -bench
// BenchmarkConsolePages -benchtime 20x ./cmd/hindsight. The target is
// under 100 ms a page.
func BenchmarkConsolePages(b *testing.B) {
	st := startTestDev(b, b.TempDir())
	defer st.Close()
	ctx := context.Background()
	const n = 10000
	verbs := []string{"exporting", "deploying", "migrating", "backing up", "reporting on", "indexing", "archiving", "syncing", "validating", "rotating"}
	adjs := []string{"nightly", "billing", "customer", "staging", "production", "analytics", "legacy", "shared", "regional", "audit"}
	nouns := []string{"ledger", "invoices", "cluster", "warehouse", "bucket", "queue", "schema", "dashboard", "certificates", "replicas", "logs", "orders", "payments"}
	fixes := []string{"use UTC timestamps", "pass --wait --timeout 10m", "read the file as gbk", "set PGTZ=UTC", "use the read replica pg-ro:5432", "retry three times with backoff",
		"keep batches under 5000 rows", "ask the on-call lead first", "run it after 22:00", "use the maintenance role", "pin the chart version", "compress with zstd"}
	kinds := []memory.Kind{memory.KindPreference, memory.KindLesson, memory.KindFact, memory.KindRule}
	base := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var ms []memory.Memory
	var eps []memory.Episode
	for i := range n {
		at := base.Add(time.Duration(i) * 7 * time.Minute)
		ep := memory.EpisodeID(memory.DefaultTenant, fmt.Sprintf("s%d", i/10))
		content := fmt.Sprintf("When %s the %s %s, %s (case %d).", verbs[i%len(verbs)], adjs[(i/7)%len(adjs)], nouns[(i/3)%len(nouns)], fixes[(i/11)%len(fixes)], i)
		m := memory.Memory{ID: fmt.Sprintf("mem_%05d", i), Tenant: memory.DefaultTenant, Version: 1, Scope: memory.SharedScope, Kind: kinds[i%4],
			Content: content, ContentHash: memory.ContentHash(kinds[i%4], content), TaskType: []string{"export", "report", "deploy"}[i%3],
			Entities: []string{"ledger"}, Confidence: 0.5, Sources: []string{ep}, Status: memory.StatusLive, ValidFrom: at,
			Decay: 1, DecayAnchor: at, DecisionID: "dec_seed", CreatedAt: at, UpdatedAt: at}
		ms = append(ms, m)
		if i%10 == 0 {
			eps = append(eps, memory.Episode{ID: ep, Tenant: memory.DefaultTenant, SessionID: fmt.Sprintf("s%d", i/10), Task: "export the ledger",
				Outcome: memory.OutcomeSuccess, StartedAt: at, EndedAt: at.Add(time.Minute), EventCount: 4, Status: memory.EpisodeLive, CreatedAt: at})
		}
	}
	for i := 0; i < n; i += 1000 {
		if err := st.runtime.Store.PutMemories(ctx, ms[i:i+1000]); err != nil {
			b.Fatal(err)
		}
	}
	for _, ep := range eps {
		if err := st.runtime.Store.PutEpisode(ctx, ep); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 200 {
		d := memory.Decision{ID: fmt.Sprintf("dec_%03d", i), Tenant: memory.DefaultTenant, Action: memory.ActionMerge, Verdict: memory.VerdictDistinct,
			Reason: "seeded", After: []memory.Memory{ms[i]}, CreatedAt: ms[i].CreatedAt}
		if err := st.runtime.Store.LogDecision(ctx, d); err != nil {
			b.Fatal(err)
		}
	}
	url := "http://" + st.http.Addr() + "/ui"
	// The first recall of a tenant loads its index; a console serves a
	// warm one.
	if _, err := st.service.Recall(ctx, memory.Query{Tenant: memory.DefaultTenant, Text: "warm up"}); err != nil {
		b.Fatal(err)
	}
	for _, p := range []string{"/", "/memories", "/memories?kind=lesson&task_type=export", "/memories?q=how+do+I+export+the+nightly+ledger", "/memories?q=how+do+I+export+the+nightly+ledger&status=live", "/memories/mem_04242",
		"/episodes", "/episodes/" + eps[7].ID, "/decisions"} {
		b.Run(p, func(b *testing.B) {
			for b.Loop() {
				resp, err := http.Get(url + p)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("%s: %d", p, resp.StatusCode)
				}
			}
		})
	}
}
