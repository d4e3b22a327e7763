package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/hindsight-memory/hindsight/app"
	"github.com/hindsight-memory/hindsight/consolidate"
	"github.com/hindsight-memory/hindsight/devserver"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/workflows"
)

// agedEpisodes are 24 sessions of three task types, two kinds of task
// each, that ended two to three months before now.
func agedEpisodes(tenant string, now time.Time) []memory.Episode {
	kinds := []struct{ taskType, task, step, attempt, cause string }{
		{"data-import", "Import the monthly sales CSV into the warehouse", "read_csv with encoding='gbk'", "read_csv with encoding='utf-8'", "UnicodeDecodeError"},
		{"data-import", "Sync the customer list from the CRM API", "fetch /v2/customers with a page size of 100", "fetch /v2/customers", "HTTP 429 Too Many Requests"},
		{"reporting", "Build the weekly revenue report", "query analytics.sales_2024 by order_time", "query by ordered_at", "Missing columns: 'ordered_at'"},
		{"reporting", "生成周报并发送给财务", "用 SimHei 字体生成图表", "读取 weekly_sales.xlsx", "ImportError: Missing optional dependency 'openpyxl'"},
		{"deployment", "Deploy billing-api to production with helm", "helm upgrade billing-api --wait --timeout 10m", "helm upgrade billing-api", "timed out waiting for the condition"},
		{"deployment", "Roll back the search service after a bad release", "kubectl rollout undo deployment/search", "helm rollback search 3", "release has no revision 3"},
	}
	var out []memory.Episode
	for k, kind := range kinds {
		for i := range 4 {
			ended := now.AddDate(0, 0, -60-7*i-k)
			session := fmt.Sprintf("aged-%d-%d", k, i)
			out = append(out, memory.Episode{
				ID: memory.EpisodeID(tenant, session), Tenant: tenant, SessionID: session,
				Task: kind.task, TaskType: kind.taskType, Steps: []string{kind.step},
				Failures: []memory.Failure{{Attempt: kind.attempt, Cause: kind.cause}},
				Outcome:  memory.OutcomeSuccess, StartedAt: ended.Add(-time.Hour), EndedAt: ended, EventCount: 12,
				Status: memory.EpisodeLive, Extractor: "offline", CreatedAt: ended,
			})
		}
	}
	return out
}

// devRuntime opens the stores `hindsight dev` keeps in dataDir, while no
// dev process runs on it.
func devRuntime(t *testing.T, dataDir string) *app.Runtime {
	t.Helper()
	t.Setenv("CLICKHOUSE_ADDR", "")
	t.Setenv("MILVUS_ADDR", "")
	t.Setenv("OPENAI_BASE_URL", "")
	s := stackFlags{dataDir: dataDir, logLevel: "warn"}
	cfg, err := s.workerConfig(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := app.Build(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

type startedCluster struct {
	batch   string // task type
	summary string // the cluster's typical episode
}

// clustersStarted reads "consolidating TYPE SUMMARY" lines until stop says so
// or the process's output ends.
func clustersStarted(t *testing.T, p *devProcess, stop func([]startedCluster) bool) []startedCluster {
	t.Helper()
	var out []startedCluster
	for line := range p.lines {
		var c startedCluster
		if _, err := fmt.Sscanf(line, "consolidating %s %s", &c.batch, &c.summary); err != nil {
			continue
		}
		out = append(out, c)
		if stop != nil && stop(out) {
			break
		}
	}
	return out
}

// TestConsolidationSurvivesKill9 kills `hindsight dev` with SIGKILL in the
// middle of a consolidation (in the second batch, once its first cluster
// is done), starts it again, and checks the result is exactly that of an
// undisturbed run: every cluster consolidated into one typical episode,
// each member archived once, a recent episode left alone, and no cluster
// that finished before the kill consolidated again.
func TestConsolidationSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts hindsight dev twice")
	}
	ctx := context.Background()
	dataDir := t.TempDir()
	const tenant = memory.DefaultTenant
	now := time.Now().UTC()

	// Seed the stores, and work out what an undisturbed run produces.
	rt := devRuntime(t, dataDir)
	eps := agedEpisodes(tenant, now)
	acts := rt.Activities(nil, "")
	for _, ep := range eps {
		if err := rt.Store.PutEpisode(ctx, ep); err != nil {
			t.Fatal(err)
		}
		if err := acts.IndexEpisode(ctx, ep); err != nil {
			t.Fatal(err)
		}
	}
	recent := agedEpisodes(tenant, now.AddDate(0, 0, 70))[0]
	recent.ID, recent.SessionID = memory.EpisodeID(tenant, "recent"), "recent"
	if err := rt.Store.PutEpisode(ctx, recent); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	clustersOf := map[string]int{}
	byType := map[string][]consolidate.Item{}
	for _, ep := range eps {
		docs, err := rt.Index.Get(ctx, memory.CollectionEpisodes, tenant, []string{ep.ID})
		if err != nil || len(docs) != 1 {
			t.Fatalf("vector of %s: %v", ep.ID, err)
		}
		byType[ep.TaskType] = append(byType[ep.TaskType], consolidate.Item{Episode: ep, Vector: docs[0].Vector})
	}
	for taskType, items := range byType {
		cls, err := consolidate.Cluster(items, consolidate.ClusterConfig{Threshold: consolidate.ThresholdFor(rt.Embedder.Model())})
		if err != nil {
			t.Fatal(err)
		}
		clustersOf[taskType] = len(cls)
		for _, cl := range cls {
			var ids []string
			for _, k := range cl {
				ids = append(ids, items[k].Episode.ID)
			}
			want[consolidate.SummaryID(tenant, ids)] = true
		}
	}
	rt.Close()
	types := slices.Sorted(maps.Keys(clustersOf))
	if len(types) < 2 || clustersOf[types[1]] < 2 {
		t.Fatalf("setup: clusters by batch %v; the test needs a second batch of two clusters or more", clustersOf)
	}
	blockAt := clustersOf[types[0]] + 2 // the second batch's second cluster

	temporalPort, mcpPort := twoFreePorts(t)
	p := startDevProcess(t, dataDir, temporalPort, mcpPort, fmt.Sprint("HINDSIGHT_TEST_CONSOLIDATE_BLOCK=", blockAt))
	dial := func() client.Client {
		tc, err := client.Dial(client.Options{HostPort: fmt.Sprintf("127.0.0.1:%d", temporalPort), Namespace: devserver.DefaultNamespace})
		if err != nil {
			t.Fatal(err)
		}
		return tc
	}
	tc := dial()
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "consolidate-kill9", TaskQueue: "hindsight-crash"},
		workflows.Consolidate, workflows.ConsolidateInput{Tenant: tenant, HeartbeatTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	before := clustersStarted(t, p, func(s []startedCluster) bool { return len(s) == blockAt })
	tc.Close()
	p.kill()
	if len(before) != blockAt {
		t.Fatalf("hindsight dev stopped after starting %d clusters, before the one to kill it in", len(before))
	}
	finished, interrupted := before[:len(before)-1], before[len(before)-1]

	p = startDevProcess(t, dataDir, temporalPort, mcpPort, "HINDSIGHT_TEST_CONSOLIDATE_BLOCK=0")
	tc = dial()
	defer tc.Close()
	waitCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var rep workflows.ConsolidateReport
	if err := tc.GetWorkflow(waitCtx, run.GetID(), "").Get(waitCtx, &rep); err != nil {
		t.Fatalf("consolidation after the kill: %v", err)
	}
	batches := 0
	it := tc.GetWorkflowHistory(ctx, run.GetID(), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "ConsolidateBatch" {
			batches++
		}
	}
	p.kill()
	after := clustersStarted(t, p, nil)

	// Finished work was not redone; the interrupted cluster was.
	for _, c := range after {
		if slices.Contains(finished, c) {
			t.Errorf("cluster %s of %s, finished before the kill, was consolidated again", c.summary, c.batch)
		}
	}
	if len(after) == 0 || after[0] != interrupted {
		t.Errorf("after the restart the clusters started were %v, want the interrupted %v first", after, interrupted)
	}
	if batches != rep.Batches {
		t.Errorf("ConsolidateBatch scheduled %d times for %d batches", batches, rep.Batches)
	}

	// Exactly the undisturbed result.
	if got := slices.Sorted(slices.Values(rep.Summaries)); !slices.Equal(got, slices.Sorted(maps.Keys(want))) {
		t.Fatalf("reported summaries %v, want %d distinct: %v", got, len(want), want)
	}
	rt = devRuntime(t, dataDir)
	defer rt.Close()
	sums, err := rt.Store.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, Statuses: []memory.EpisodeStatus{memory.EpisodeSummary}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != len(want) {
		t.Fatalf("stored summaries = %d, want %d", len(sums), len(want))
	}
	archived := map[string]int{}
	for _, s := range sums {
		if !want[s.ID] {
			t.Fatalf("unexpected summary %s", s.ID)
		}
		for _, m := range s.SourceEpisodes {
			archived[m]++
		}
	}
	if len(archived) != len(eps) {
		t.Fatalf("%d episodes archived, want %d", len(archived), len(eps))
	}
	for m, n := range archived {
		ep, err := rt.Store.Episode(ctx, tenant, m)
		if n != 1 || err != nil || ep.Status != memory.EpisodeCold {
			t.Fatalf("episode %s: in %d summaries, %s (%v); want one, cold", m, n, ep.Status, err)
		}
	}
	if ep, err := rt.Store.Episode(ctx, tenant, recent.ID); err != nil || ep.Status != memory.EpisodeLive {
		t.Fatalf("the recent episode after consolidation: %s (%v), want live", ep.Status, err)
	}
}
