package worker_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/hindsight-memory/hindsight/app"
	"github.com/hindsight-memory/hindsight/internal/histories"
	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/workflows"
)

// TestDecaySweep runs the Decay workflow on the real embedded Temporal
// over two tenants: memories unused for 12 decay periods go cold, for 22
// archived; fresh, pinned and quarantined ones keep their status; the
// report counts what moved; and a second sweep moves nothing.
func TestDecaySweep(t *testing.T) {
	ctx := context.Background()
	tc := startTemporal(t)
	rt := runWorker(t, tc, app.Config{MemoryStore: true})

	now := time.Now().UTC()
	day := 24 * time.Hour
	mem := func(tenant, id string, unused time.Duration, set func(*memory.Memory)) memory.Memory {
		m := unusedFact(tenant, id, "Memory "+id+" of "+tenant+".", now.Add(-unused))
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

// largestPayload is the size of the largest event in a workflow's latest
// run: what Temporal's payload limit applies to.
func largestPayload(t *testing.T, tc client.Client, workflowID string) int {
	t.Helper()
	it := tc.GetWorkflowHistory(context.Background(), workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	most := 0
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		most = max(most, proto.Size(e))
	}
	return most
}

// TestDecayOfManyMemories sweeps a tenant in which 1,500 memories go cold
// at once: every one moves, the report counts them, and no event of the
// sweep's or the ledger's history comes near Temporal's 2 MiB payload
// limit (the decisions, about 2 KB each, stay in the decision log).
func TestDecayOfManyMemories(t *testing.T) {
	ctx := context.Background()
	tc := startTemporal(t)
	rt := runWorker(t, tc, app.Config{MemoryStore: true})

	const n = 1500
	at := time.Now().UTC().Add(-100 * 24 * time.Hour)
	seed := make([]memory.Memory, n)
	for i := range seed {
		seed[i] = unusedFact("acme", fmt.Sprintf("m%04d", i), fmt.Sprintf("Fact number %d about the billing service, unused for a hundred days.", i), at)
	}
	if err := rt.Indexer.Write(ctx, seed); err != nil {
		t.Fatal(err)
	}
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "decay-many", TaskQueue: taskQueue}, workflows.Decay, workflows.DecayInput{Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	var rep workflows.DecayReport
	if err := run.Get(ctx, &rep); err != nil {
		t.Fatalf("decay of %d memories: %v", n, err)
	}
	if rep.Changed != n || rep.ByTo["cold"] != n {
		t.Fatalf("decay report = %+v, want %d cold", rep, n)
	}
	cold, err := rt.Store.Memories(ctx, memory.MemoryFilter{Tenant: "acme", Statuses: []memory.Status{memory.StatusCold}})
	if err != nil || len(cold) != n {
		t.Fatalf("%d memories cold after the sweep (%v), want %d", len(cold), err, n)
	}
	for _, id := range []string{"decay-many", ledger.WorkflowID("acme")} {
		most := largestPayload(t, tc, id)
		t.Logf("largest event of %s: %d bytes", id, most)
		if most > 256<<10 {
			t.Errorf("the largest event of %s is %d bytes: payloads grow with the tenant", id, most)
		}
	}
}

// stalledStore is a store on which one tenant's decay never returns until
// the test ends, as on a ledger that is stuck.
type stalledStore struct {
	*memory.MemStore
	tenant  string
	release chan struct{}
}

func (s stalledStore) Memories(ctx context.Context, f memory.MemoryFilter) ([]memory.Memory, error) {
	if f.Tenant == s.tenant && slices.Contains(f.Statuses, memory.StatusArchived) {
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.MemStore.Memories(ctx, f)
}

// TestDecaySweepSkipsAStuckTenant sweeps three tenants while one tenant's
// ledger is stuck: the others are swept, the sweep ends within the
// per-tenant timeout rather than waiting on the stuck ledger, and the
// report names it.
func TestDecaySweepSkipsAStuckTenant(t *testing.T) {
	ctx := context.Background()
	tc := startTemporal(t)
	store := stalledStore{MemStore: memory.NewMemStore(), tenant: "stuck", release: make(chan struct{})}
	defer close(store.release)
	rt := runWorker(t, tc, app.Config{Store: store})

	at := time.Now().UTC().Add(-100 * 24 * time.Hour)
	var seed []memory.Memory
	for _, tenant := range []string{"acme", "stuck", "globex"} {
		seed = append(seed, unusedFact(tenant, "old", "An old fact of "+tenant+".", at))
	}
	if err := rt.Indexer.Write(ctx, seed); err != nil {
		t.Fatal(err)
	}
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "decay-stuck", TaskQueue: taskQueue}, workflows.Decay,
		workflows.DecayInput{TenantTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var rep workflows.DecayReport
	if err := run.Get(waitCtx, &rep); err != nil {
		t.Fatalf("a sweep with one stuck tenant: %v", err)
	}
	if rep.Tenants != 2 || rep.ByTo["cold"] != 2 || !slices.Equal(rep.Stuck, []string{"stuck"}) {
		t.Fatalf("decay report = %+v, want 2 tenants swept and stuck named", rep)
	}
	for _, tenant := range []string{"acme", "globex"} {
		if m, err := store.MemStore.Memory(ctx, tenant, "old"); err != nil || m.Status != memory.StatusCold {
			t.Errorf("%s's old memory after the sweep: %s, %v; want cold", tenant, m.Status, err)
		}
	}
}
