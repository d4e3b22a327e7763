package worker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/app"
	"github.com/hindsight-memory/hindsight/internal/histories"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/store/generation"
	"github.com/hindsight-memory/hindsight/store/local"
	"github.com/hindsight-memory/hindsight/worker"
	"github.com/hindsight-memory/hindsight/workflows"
)

func memoryFor(tenant string, i int, content string, at time.Time) memory.Memory {
	return memory.Memory{
		ID: fmt.Sprintf("m%02d", i), Tenant: tenant, Version: 1, Kind: memory.KindLesson, Content: content,
		ContentHash: memory.ContentHash(memory.KindLesson, content), Confidence: 0.5, Status: memory.StatusLive,
		Decay: 1, DecayAnchor: at, ValidFrom: at, CreatedAt: at, UpdatedAt: at,
	}
}

// TestReindexSwitchesWithoutDowntime changes the embedder's dimension: the
// new runtime keeps recalling from the old generation, the Reindex
// workflow (on the real Temporal server) fills the new one, switches, and
// catches up with a memory written meanwhile; recall never fails.
func TestReindexSwitchesWithoutDowntime(t *testing.T) {
	ctx := context.Background()
	tc := startTemporal(t)

	store := memory.NewMemStore()
	vectors := t.TempDir()
	now := time.Now().UTC()
	contents := []string{"Read sales.csv with encoding='gbk'", "Deploy billing-api with --wait --timeout 10m", "Query analytics.sales_2024 by order_time",
		"Install openpyxl==3.1.2 before reading xlsx", "Render Chinese charts with the SimHei font"}

	// Generation 1: the offline embedder at 64 dimensions.
	old, err := app.Build(ctx, app.Config{Store: store, EmbedDim: 64, Local: &local.Config{Dir: vectors}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tenant := range []string{"acme", "globex"} {
		var ms []memory.Memory
		for i, c := range contents {
			ms = append(ms, memoryFor(tenant, i, c, now))
		}
		if err := old.Indexer.Write(ctx, ms); err != nil {
			t.Fatal(err)
		}
	}
	oldGen, _ := old.Generation()
	old.Close()

	// The embedder changes to 96 dimensions.
	rt, err := app.Build(ctx, app.Config{Store: store, EmbedDim: 96, Local: &local.Config{Dir: vectors}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	active, next := rt.Generation()
	if active != oldGen || next == "" || next == oldGen {
		t.Fatalf("generations after the change = %q → %q, want %q active and a new next", active, next, oldGen)
	}
	recallOK := func() error {
		resp, err := rt.Engine.Recall(ctx, memory.Query{Tenant: "acme", Text: "how to read the sales csv encoding", TopK: 3})
		if err != nil {
			return err
		}
		if len(resp.Results) == 0 || resp.Results[0].Memory.ID != "m00" {
			return fmt.Errorf("recall returned %+v", resp.Results)
		}
		if resp.Results[0].Breakdown.Similarity <= 0 {
			return fmt.Errorf("recall found it without its vector: %+v", resp.Results[0].Breakdown)
		}
		return nil
	}
	if err := recallOK(); err != nil {
		t.Fatalf("recall from the old generation before the reindex: %v", err)
	}

	w := worker.NewWorker(tc, "reindex-test", rt.Activities(tc, "reindex-test"), nil)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// Recall keeps answering, from one generation or the other, throughout.
	var recalls, failures atomic.Int64
	var firstFailure atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		probe := time.NewTicker(5 * time.Millisecond) // paces the probe
		defer probe.Stop()
		for {
			select {
			case <-stop:
				return
			case <-probe.C:
			}
			recalls.Add(1)
			if err := recallOK(); err != nil {
				failures.Add(1)
				firstFailure.CompareAndSwap(nil, err.Error())
			}
		}
	}()

	gen, err := app.StartReindex(ctx, tc, "reindex-test", rt)
	if err != nil || gen != next {
		t.Fatalf("StartReindex = %q, %v", gen, err)
	}
	// A memory written while the reindex runs must reach the new generation.
	late := memoryFor("acme", 9, "Rotate the API keys every 90 days", now.Add(time.Minute))
	if err := rt.Indexer.Write(ctx, []memory.Memory{late}); err != nil {
		t.Fatal(err)
	}
	var rep workflows.ReindexReport
	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := tc.GetWorkflow(waitCtx, workflows.ReindexWorkflowID(next), "").Get(waitCtx, &rep); err != nil {
		t.Fatalf("reindex: %v", err)
	}
	close(stop)
	wg.Wait()
	histories.Record(t, tc, workflows.ReindexWorkflowID(next), "", "reindex")
	if failures.Load() > 0 {
		t.Fatalf("%d of %d recalls failed during the reindex, first: %v", failures.Load(), recalls.Load(), firstFailure.Load())
	}

	if a, n := rt.Generation(); a != next || n != "" {
		t.Fatalf("generations after the reindex = %q → %q, want %q active", a, n, next)
	}
	if rec, _ := store.Setting(ctx, generation.Setting); !strings.Contains(rec, `"name":"`+next+`"`) {
		t.Fatalf("recorded generation = %s, want %s", rec, next)
	}
	if rep.Tenants != 2 || rep.Reindexed < 2*len(contents) {
		t.Fatalf("report = %+v", rep)
	}
	docs, err := rt.Index.Get(ctx, memory.CollectionMemories, "acme", []string{"m00", "m09"})
	if err != nil || len(docs) != 2 || len(docs[0].Vector) != 96 || len(docs[1].Vector) != 96 {
		t.Fatalf("new generation's documents = %d (%v), want both memories at 96 dimensions", len(docs), err)
	}
	if err := recallOK(); err != nil {
		t.Fatalf("recall from the new generation: %v", err)
	}
	// A restart reads the recorded generation directly.
	rt.Close()
	again, err := app.Build(ctx, app.Config{Store: store, EmbedDim: 96, Local: &local.Config{Dir: vectors}})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if a, n := again.Generation(); a != next || n != "" {
		t.Fatalf("after a restart: %q → %q", a, n)
	}
}

// blindStore is the store as one process sees it when it cannot read the
// recorded generation (while blind is set).
type blindStore struct {
	*memory.MemStore
	blind *atomic.Bool
}

func (s blindStore) Setting(ctx context.Context, key string) (string, error) {
	if key == generation.Setting && s.blind.Load() {
		return "", errors.New("settings unreadable from this host")
	}
	return s.MemStore.Setting(ctx, key)
}

// TestReindexWaitsForEveryProcess runs two processes on one store through
// a change of embedder. One cannot read the recorded generation, so it
// keeps reading the old one: the reindex does not claim a switch that did
// not happen, but fails, naming the process and what it reports. Once the
// process can read again it switches, and the reindex run again succeeds.
func TestReindexWaitsForEveryProcess(t *testing.T) {
	ctx := context.Background()
	tc := startTemporal(t)
	store := memory.NewMemStore()
	vectors := t.TempDir()
	now := time.Now().UTC()

	old, err := app.Build(ctx, app.Config{Store: store, EmbedDim: 64, Local: &local.Config{Dir: vectors}})
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Indexer.Write(ctx, []memory.Memory{memoryFor("acme", 0, "Read sales.csv with encoding='gbk'", now)}); err != nil {
		t.Fatal(err)
	}
	oldGen, _ := old.Generation()
	old.Close()

	a, err := app.Build(ctx, app.Config{Store: store, EmbedDim: 96, Local: &local.Config{Dir: vectors}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	blind := &atomic.Bool{}
	b, err := app.Build(ctx, app.Config{Store: blindStore{store, blind}, EmbedDim: 96, Local: &local.Config{Dir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	blind.Store(true)
	_, next := a.Generation()

	w := worker.NewWorker(tc, "reindex-wait", a.Activities(tc, "reindex-wait"), nil)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	reindex := func() error {
		opts := client.StartWorkflowOptions{ID: workflows.ReindexWorkflowID(next), TaskQueue: "reindex-wait",
			WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY}
		run, err := tc.ExecuteWorkflow(ctx, opts, workflows.Reindex, workflows.ReindexInput{Generation: next, SwitchTimeout: 12 * time.Second})
		if err != nil {
			return err
		}
		return run.Get(ctx, nil)
	}

	err = reindex()
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != activities.ErrGenerationSwitch {
		t.Fatalf("reindex with a process that cannot switch = %v, want a %s failure", err, activities.ErrGenerationSwitch)
	}
	for _, want := range []string{"1 process(es)", "reads " + oldGen, "settings unreadable from this host"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the failure does not say %q: %v", want, err)
		}
	}
	if active, _ := b.Generation(); active != oldGen {
		t.Fatalf("the blind process reads %s, want still %s", active, oldGen)
	}
	if active, _ := a.Generation(); active != next {
		t.Fatalf("the reindexing process reads %s, want %s", active, next)
	}

	blind.Store(false)
	if err := reindex(); err != nil {
		t.Fatalf("reindex again once every process can switch: %v", err)
	}
	if active, _ := b.Generation(); active != next {
		t.Fatalf("after the reindex succeeded the second process reads %s, want %s", active, next)
	}
}
