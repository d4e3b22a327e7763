package merge

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/plan"
)

// pipeline runs the merge steps the Merge activities run, against the
// in-memory reference store: exact-hash lookup, neighbours (every live
// memory of the kind, with a fixed similarity standing in for the vector
// search), pre-filter, offline judge, plan, write and log.
type pipeline struct {
	t     *testing.T
	store *memory.MemStore
	judge memory.Judge
	n     int
}

func (p *pipeline) merge(ctx context.Context, episode string, now time.Time, c memory.Candidate) memory.Decision {
	p.t.Helper()
	p.n++
	hash := memory.ContentHash(c.Kind, c.Content)
	in := plan.MergeInput{
		Op:        plan.Op{DecisionID: memory.DecisionID(tenant, "wf-"+episode, p.n, hash), WorkflowID: "wf-" + episode, Now: now},
		Tenant:    tenant,
		EpisodeID: episode,
		Candidate: c,
	}
	exact, err := p.store.Memories(ctx, memory.MemoryFilter{Tenant: tenant, ContentHash: hash,
		Statuses: []memory.Status{memory.StatusLive, memory.StatusCold, memory.StatusArchived}})
	if err != nil {
		p.t.Fatal(err)
	}
	if len(exact) > 0 {
		in.Exact = &exact[0]
	} else {
		live, err := p.store.Memories(ctx, memory.MemoryFilter{Tenant: tenant, Kinds: []memory.Kind{c.Kind}, Statuses: []memory.Status{memory.StatusLive}})
		if err != nil {
			p.t.Fatal(err)
		}
		var ns []memory.Neighbor
		for _, m := range live {
			ns = append(ns, memory.Neighbor{Memory: m, Similarity: 0.9})
		}
		in.Neighbors = Prefilter(ns, DefaultThreshold, DefaultMaxNeighbors)
		if in.Judgement, err = p.judge.Judge(ctx, c, in.Neighbors); err != nil {
			p.t.Fatal(err)
		}
	}
	d, err := plan.Merge(in)
	if err != nil {
		p.t.Fatal(err)
	}
	p.apply(ctx, d)
	return d
}

// apply checks a planned decision against the current versions, logs it,
// then writes its versions: the order that keeps every write undoable.
func (p *pipeline) apply(ctx context.Context, d memory.Decision) {
	p.t.Helper()
	current := map[string]memory.Memory{}
	for _, id := range d.MemoryIDs() {
		if m, err := p.store.Memory(ctx, tenant, id); err == nil {
			current[id] = m
		}
	}
	if err := plan.VerifyCurrent(d, current); err != nil {
		p.t.Fatal(err)
	}
	if err := p.store.LogDecision(ctx, d); err != nil {
		p.t.Fatal(err)
	}
	if len(d.After) > 0 {
		if err := p.store.PutMemories(ctx, d.After); err != nil {
			p.t.Fatal(err)
		}
	}
}

func (p *pipeline) live(ctx context.Context) []memory.Memory {
	p.t.Helper()
	ms, err := p.store.Memories(ctx, memory.MemoryFilter{Tenant: tenant, Statuses: []memory.Status{memory.StatusLive}})
	if err != nil {
		p.t.Fatal(err)
	}
	return ms
}

// TestMergeScenario is the acceptance story, end to end on the
// planners and the offline judge: a preference stated in two sessions
// becomes one memory with two sources and higher confidence; a later
// contradicting preference supersedes it, traceably; an undo restores it.
func TestMergeScenario(t *testing.T) {
	ctx := context.Background()
	p := &pipeline{t: t, store: memory.NewMemStore(), judge: NewOfflineJudge(OfflineOptions{})}
	day := 24 * time.Hour
	pref := func(s string) memory.Candidate { return memory.Candidate{Kind: memory.KindPreference, Content: s} }

	d1 := p.merge(ctx, "ep_1", t0, pref("Reports should use UTC timestamps."))
	d2 := p.merge(ctx, "ep_2", t0.Add(2*day), pref("Use UTC timestamps in reports."))
	if d1.Verdict != memory.VerdictDistinct || d2.Verdict != memory.VerdictDuplicate {
		t.Fatalf("verdicts %s, %s; want distinct then duplicate (%s)", d1.Verdict, d2.Verdict, d2.Reason)
	}
	live := p.live(ctx)
	if len(live) != 1 {
		t.Fatalf("%d live memories, want 1", len(live))
	}
	utc := live[0]
	if !slices.Equal(utc.Sources, []string{"ep_1", "ep_2"}) || utc.Confidence <= d1.After[0].Confidence {
		t.Errorf("one memory with two sources and higher confidence: sources %v, confidence %v (was %v)", utc.Sources, utc.Confidence, d1.After[0].Confidence)
	}

	// The same session distilled again changes nothing.
	if d := p.merge(ctx, "ep_2", t0.Add(2*day), pref("Use UTC timestamps in reports.")); len(d.After) != 0 {
		t.Errorf("re-merging an episode wrote %d versions", len(d.After))
	}

	d3 := p.merge(ctx, "ep_3", t0.Add(9*day), pref("Reports should use Beijing time (UTC+8) timestamps."))
	if d3.Verdict != memory.VerdictConflicts || d3.TargetID != utc.ID {
		t.Fatalf("verdict %s on %s, want conflicts on %s (%s)", d3.Verdict, d3.TargetID, utc.ID, d3.Reason)
	}
	live = p.live(ctx)
	if len(live) != 1 || live[0].Content != "Reports should use Beijing time (UTC+8) timestamps." {
		t.Fatalf("live memories after the change: %v", live)
	}
	beijing := live[0]
	old, err := p.store.Memory(ctx, tenant, utc.ID)
	if err != nil {
		t.Fatal(err)
	}
	if old.Status != memory.StatusSuperseded || old.SupersededBy != beijing.ID || !old.ValidTo.Equal(t0.Add(9*day)) ||
		!slices.Equal(beijing.Supersedes, []string{utc.ID}) || old.Confidence >= beijing.Confidence {
		t.Errorf("old %+v\nnew %+v", old, beijing)
	}
	hist, err := p.store.History(ctx, tenant, utc.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 3 || hist[1].Status != memory.StatusLive || hist[2].Status != memory.StatusSuperseded {
		t.Errorf("history of the old preference: %d versions", len(hist))
	}

	// Undo the change from the decision log.
	logged, err := p.store.Decision(ctx, tenant, d3.ID)
	if err != nil {
		t.Fatal(err)
	}
	current := map[string]memory.Memory{}
	for _, id := range logged.MemoryIDs() {
		if current[id], err = p.store.Memory(ctx, tenant, id); err != nil {
			t.Fatal(err)
		}
	}
	u, err := plan.Undo(plan.Op{DecisionID: "dec-undo-" + d3.ID, Now: t0.Add(10 * day)}, logged, current, false)
	if err != nil {
		t.Fatal(err)
	}
	p.apply(ctx, u)
	live = p.live(ctx)
	if len(live) != 1 || live[0].ID != utc.ID || live[0].Content != utc.Content || !slices.Equal(live[0].Sources, utc.Sources) ||
		live[0].Confidence != utc.Confidence || live[0].SupersededBy != "" || !live[0].ValidTo.IsZero() {
		t.Errorf("after undo: %+v", live)
	}
	if gone, _ := p.store.Memory(ctx, tenant, beijing.ID); gone.Status != memory.StatusForgotten {
		t.Errorf("the undone preference is %s, want forgotten", gone.Status)
	}
	decisions, err := p.store.Decisions(ctx, memory.DecisionFilter{Tenant: tenant, MemoryID: utc.ID})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, d := range decisions {
		actions = append(actions, fmt.Sprintf("%s/%s", d.Action, d.Verdict))
	}
	// The re-merge of ep_2 changed nothing but is still logged: every
	// verdict is audited.
	if want := []string{"merge/distinct", "merge/duplicate", "merge/duplicate", "merge/conflicts", "undo/"}; !slices.Equal(actions, want) {
		t.Errorf("audit trail %v, want %v", actions, want)
	}

	// Stated once more, word for word: the exact-hash path, no judge.
	d5 := p.merge(ctx, "ep_5", t0.Add(11*day), pref("reports should use UTC timestamps"))
	if d5.Judge != plan.JudgeExact || d5.TargetID != utc.ID || len(d5.After[0].Sources) != 3 {
		t.Errorf("exact duplicate: %+v", d5)
	}
}
