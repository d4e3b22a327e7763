package worker_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/hindsight-memory/hindsight/app"
	"github.com/hindsight-memory/hindsight/consolidate"
	"github.com/hindsight-memory/hindsight/internal/histories"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/worker"
	"github.com/hindsight-memory/hindsight/workflows"
)

const taskQueue = "maintain-test"

// oldEpisodes are sessions of three task types, two kinds of task each,
// that ended two to three months ago.
func oldEpisodes(tenant string, now time.Time) []memory.Episode {
	kinds := []struct {
		taskType, task string
		steps          []string
		failure        memory.Failure
	}{
		{"data-import", "Import the monthly sales CSV into the warehouse", []string{"detect encoding with chardet", "read_csv with encoding='gbk'", "load into staging.sales"},
			memory.Failure{Attempt: "read_csv with encoding='utf-8'", Cause: "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xb5"}},
		{"data-import", "Sync the customer list from the CRM API", []string{"fetch /v2/customers with pagination", "upsert into crm.customers"},
			memory.Failure{Attempt: "fetch /v2/customers without a page size", Cause: "HTTP 429 Too Many Requests"}},
		{"reporting", "Build the weekly revenue report", []string{"query analytics.sales_2024 by order_time", "render chart weekly_report.png", "email the report"},
			memory.Failure{Attempt: "query by ordered_at", Cause: "Missing columns: 'ordered_at'"}},
		{"reporting", "生成周报并发送给财务", []string{"读取 weekly_sales.xlsx", "用 SimHei 字体生成图表", "发送邮件"},
			memory.Failure{Attempt: "读取 weekly_sales.xlsx 之前没有安装 openpyxl", Cause: "ImportError: Missing optional dependency 'openpyxl'"}},
		{"deployment", "Deploy billing-api to production with helm", []string{"helm upgrade billing-api --wait --timeout 10m", "check rollout status"},
			memory.Failure{Attempt: "helm upgrade billing-api", Cause: "UPGRADE FAILED: timed out waiting for the condition"}},
		{"deployment", "Roll back the search service after a bad release", []string{"kubectl rollout undo deployment/search", "verify error rate"},
			memory.Failure{Attempt: "helm rollback search 3", Cause: "release has no revision 3"}},
	}
	var out []memory.Episode
	for k, kind := range kinds {
		for i := range 4 {
			ended := now.AddDate(0, 0, -60-7*i-k)
			session := fmt.Sprintf("old-%d-%d", k, i)
			out = append(out, memory.Episode{
				ID: memory.EpisodeID(tenant, session), Tenant: tenant, SessionID: session,
				Task: kind.task, TaskType: kind.taskType, Steps: kind.steps, Failures: []memory.Failure{kind.failure},
				Outcome: memory.OutcomeSuccess, StartedAt: ended.Add(-time.Hour), EndedAt: ended, EventCount: 12,
				Status: memory.EpisodeLive, Extractor: "offline", CreatedAt: ended,
			})
		}
	}
	return out
}

type clusterCall struct {
	batch   string // task type
	summary string // the typical episode's ID: the cluster
}

// watchedSummarizer is the offline summarizer with a hook that sees each
// cluster as its consolidation starts, and may stop it.
type watchedSummarizer struct {
	on func(ctx context.Context, c clusterCall) error
}

func (w watchedSummarizer) Summarize(ctx context.Context, tenant string, members []memory.Episode, now time.Time) (consolidate.Summary, error) {
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.ID
	}
	if err := w.on(ctx, clusterCall{members[0].TaskType, consolidate.SummaryID(tenant, ids)}); err != nil {
		return consolidate.Summary{}, err
	}
	return consolidate.Offline{}.Summarize(ctx, tenant, members, now)
}

// TestConsolidateSurvivesWorkerCrash stops the worker in the middle of a
// consolidation, after some batches and clusters finished, starts another,
// and checks the result is exactly that of an undisturbed run: every
// cluster consolidated once, no summary twice, finished work not redone.
func TestConsolidateSurvivesWorkerCrash(t *testing.T) {
	ctx := context.Background()
	tc := startTemporal(t)
	rt, err := app.Build(ctx, app.Config{MemoryStore: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()

	const tenant = "acme"
	now := time.Now().UTC()
	eps := oldEpisodes(tenant, now)
	base := rt.Activities(tc, taskQueue)
	for _, ep := range eps {
		if err := rt.Store.PutEpisode(ctx, ep); err != nil {
			t.Fatal(err)
		}
		if err := base.IndexEpisode(ctx, ep); err != nil {
			t.Fatal(err)
		}
	}
	recent := oldEpisodes(tenant, now.AddDate(0, 0, 70))[0] // ended last week: too young
	recent.ID, recent.SessionID = memory.EpisodeID(tenant, "recent"), "recent"
	if err := rt.Store.PutEpisode(ctx, recent); err != nil {
		t.Fatal(err)
	}

	// What an undisturbed run must produce, cluster by cluster.
	want := map[string]bool{}
	byType := map[string][]consolidate.Item{}
	for _, ep := range eps {
		docs, _ := rt.Index.Get(ctx, memory.CollectionEpisodes, tenant, []string{ep.ID})
		byType[ep.TaskType] = append(byType[ep.TaskType], consolidate.Item{Episode: ep, Vector: docs[0].Vector})
	}
	for _, items := range byType {
		cls, err := consolidate.Cluster(items, consolidate.ClusterConfig{Threshold: consolidate.ThresholdFor(rt.Embedder.Model())})
		if err != nil {
			t.Fatal(err)
		}
		for _, cl := range cls {
			var ids []string
			for _, k := range cl {
				ids = append(ids, items[k].Episode.ID)
			}
			want[consolidate.SummaryID(tenant, ids)] = true
		}
	}
	if len(want) < 4 {
		t.Fatalf("setup: only %d clusters expected; the test needs several per batch", len(want))
	}

	// Worker A stops in the middle: in the second batch, after its first
	// cluster is done.
	var mu sync.Mutex
	var calls []clusterCall
	stuck := make(chan struct{})
	var once sync.Once
	var batches []string // in the order they started
	inBatch := map[string]int{}
	crashed := func(ctx context.Context, c clusterCall) error {
		mu.Lock()
		calls = append(calls, c)
		if !slices.Contains(batches, c.batch) {
			batches = append(batches, c.batch)
		}
		inBatch[c.batch]++
		second := len(batches) == 2 && c.batch == batches[1]
		n := inBatch[c.batch]
		mu.Unlock()
		if second && n == 2 {
			once.Do(func() { close(stuck) })
			<-ctx.Done() // the worker dies here
			return ctx.Err()
		}
		return nil
	}
	record := func(ctx context.Context, c clusterCall) error {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, c)
		return nil
	}
	actsA := rt.Activities(tc, taskQueue)
	actsA.Summarizer = watchedSummarizer{crashed}
	wA := worker.NewWorker(tc, taskQueue, actsA, nil)
	if err := wA.Start(); err != nil {
		t.Fatal(err)
	}
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "consolidate-crash", TaskQueue: taskQueue},
		workflows.Consolidate, workflows.ConsolidateInput{Tenant: tenant, HeartbeatTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-stuck:
	case <-time.After(2 * time.Minute):
		t.Fatal("the consolidation never reached the second batch")
	}
	wA.Stop()
	mu.Lock()
	before := slices.Clone(calls)
	mu.Unlock()

	actsB := rt.Activities(tc, taskQueue)
	actsB.Summarizer = watchedSummarizer{record}
	wB := worker.NewWorker(tc, taskQueue, actsB, nil)
	if err := wB.Start(); err != nil {
		t.Fatal(err)
	}
	defer wB.Stop()
	waitCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var rep workflows.ConsolidateReport
	if err := run.Get(waitCtx, &rep); err != nil {
		t.Fatalf("consolidation after the crash: %v", err)
	}

	histories.Record(t, tc, run.GetID(), run.GetRunID(), "consolidate")

	// Exactly the undisturbed result.
	got := map[string]bool{}
	for _, id := range rep.Summaries {
		if got[id] {
			t.Fatalf("summary %s reported twice", id)
		}
		got[id] = true
	}
	if len(got) != len(want) {
		t.Fatalf("summaries = %d, want %d", len(got), len(want))
	}
	for id := range want {
		if !got[id] {
			t.Fatalf("summary %s missing", id)
		}
	}
	sums, err := rt.Store.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, Statuses: []memory.EpisodeStatus{memory.EpisodeSummary}})
	if err != nil {
		t.Fatal(err)
	}
	archived := map[string]int{}
	for _, s := range sums {
		if !want[s.ID] {
			t.Fatalf("unexpected summary %s stored", s.ID)
		}
		for _, m := range s.SourceEpisodes {
			archived[m]++
		}
	}
	if len(sums) != len(want) {
		t.Fatalf("stored summaries = %d, want %d", len(sums), len(want))
	}
	for m, n := range archived {
		if n != 1 {
			t.Fatalf("episode %s is in %d summaries", m, n)
		}
		ep, err := rt.Store.Episode(ctx, tenant, m)
		if err != nil || ep.Status != memory.EpisodeCold {
			t.Fatalf("member %s after consolidation: %+v %v, want archived", m, ep.Status, err)
		}
	}
	if ep, err := rt.Store.Episode(ctx, tenant, recent.ID); err != nil || ep.Status != memory.EpisodeLive {
		t.Fatalf("a recent episode was consolidated: %+v %v", ep.Status, err)
	}
	if rep.Archived != len(archived) {
		t.Fatalf("report archived = %d, want %d", rep.Archived, len(archived))
	}

	// Finished work was not redone: worker B's clusters are the ones A did
	// not finish, and no finished batch was scheduled again.
	mu.Lock()
	after := calls[len(before):]
	mu.Unlock()
	interrupted := before[len(before)-1]
	for _, c := range after {
		for _, d := range before[:len(before)-1] {
			if c == d {
				t.Fatalf("cluster %s of %s, finished before the crash, was consolidated again", c.summary, c.batch)
			}
		}
	}
	if len(after) == 0 || after[0] != interrupted {
		t.Fatalf("worker B started with %v, want to resume at %v", after, interrupted)
	}
	scheduled := countScheduled(t, tc, run, "ConsolidateBatch")
	if scheduled != rep.Batches {
		t.Fatalf("ConsolidateBatch scheduled %d times for %d batches", scheduled, rep.Batches)
	}
}

// countScheduled counts the activities of a type a workflow scheduled.
func countScheduled(t *testing.T, tc client.Client, run client.WorkflowRun, activityType string) int {
	t.Helper()
	it := tc.GetWorkflowHistory(context.Background(), run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	n := 0
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := scheduledType(ev); a == activityType {
			n++
		}
	}
	return n
}

func scheduledType(ev *history.HistoryEvent) string {
	if attrs := ev.GetActivityTaskScheduledEventAttributes(); attrs != nil {
		return attrs.GetActivityType().GetName()
	}
	return ""
}
