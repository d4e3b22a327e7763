package worker_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hindsight-memory/hindsight/internal/histories"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/worker"
	"github.com/hindsight-memory/hindsight/workflows"
)

// TestDecaySweep runs the Decay workflow on the real embedded Temporal
// over two tenants: memories unused for 12 decay periods go cold, for 22
// archived; fresh, pinned and quarantined ones keep their status; the
// report counts what moved; and a second sweep moves nothing.
func TestDecaySweep(t *testing.T) {
	ctx := context.Background()
	tc := startTemporal(t)
	rt, err := worker.Build(ctx, worker.Config{MemoryStore: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	w := worker.NewWorker(tc, taskQueue, rt.Activities(tc, taskQueue), nil)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	now := time.Now().UTC()
	day := 24 * time.Hour
	mem := func(tenant, id string, unused time.Duration, set func(*memory.Memory)) memory.Memory {
		at := now.Add(-unused)
		content := "Memory " + id + " of " + tenant + "."
		m := memory.Memory{ID: id, Tenant: tenant, Version: 1, Scope: memory.SharedScope, Kind: memory.KindFact,
			Content: content, ContentHash: memory.ContentHash(memory.KindFact, content), Status: memory.StatusLive,
			Confidence: 0.5, Decay: 1, DecayAnchor: at, ValidFrom: at, CreatedAt: at, UpdatedAt: at}
		if set != nil {
			set(&m)
		}
		return m
	}
	seed := []memory.Memory{
		mem("acme", "fresh", 3*day, nil),
		mem("acme", "unused-100d", 100*day, nil),
		mem("acme", "unused-200d", 200*day, nil),
		mem("acme", "pinned", 200*day, func(m *memory.Memory) { m.Pinned = true }),
		mem("acme", "quarantined", 200*day, func(m *memory.Memory) { m.Status = memory.StatusQuarantined }),
		mem("globex", "unused-120d", 120*day, nil),
	}
	if err := rt.Indexer.Write(ctx, seed); err != nil {
		t.Fatal(err)
	}

	sweep := func(id string) workflows.DecayReport {
		t.Helper()
		run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue}, workflows.Decay, workflows.DecayInput{})
		if err != nil {
			t.Fatal(err)
		}
		waitCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		var rep workflows.DecayReport
		if err := run.Get(waitCtx, &rep); err != nil {
			t.Fatalf("decay: %v", err)
		}
		return rep
	}
	rep := sweep("decay-1")
	histories.Record(t, tc, "decay-1", "", "decay")
	if rep.Tenants != 2 || rep.Changed != 3 || rep.ByTo["cold"] != 2 || rep.ByTo["archived"] != 1 {
		t.Fatalf("decay report = %+v, want 2 tenants, 2 cold, 1 archived", rep)
	}
	for _, c := range []struct {
		tenant, id string
		want       memory.Status
	}{
		{"acme", "fresh", memory.StatusLive},
		{"acme", "unused-100d", memory.StatusCold},
		{"acme", "unused-200d", memory.StatusArchived},
		{"acme", "pinned", memory.StatusLive},
		{"acme", "quarantined", memory.StatusQuarantined},
		{"globex", "unused-120d", memory.StatusCold},
	} {
		m, err := rt.Store.Memory(ctx, c.tenant, c.id)
		if err != nil || m.Status != c.want {
			t.Errorf("%s/%s after the sweep: %s, %v; want %s", c.tenant, c.id, m.Status, err, c.want)
		}
	}
	if again := sweep("decay-2"); again.Changed != 0 {
		t.Fatalf("a second sweep changed %d memories: %+v", again.Changed, again)
	}
}
