package activities_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/memory/storetest"
)

// flakyStore fails its next failPuts memory writes and failLogs decision
// writes, as a worker stopped at that point would leave the stores: what
// was written before stays written.
type flakyStore struct {
	*memory.MemStore
	failPuts, failLogs int
}

var errCut = errors.New("connection reset by peer")

func (s *flakyStore) PutMemories(ctx context.Context, ms []memory.Memory) error {
	if s.failPuts > 0 {
		s.failPuts--
		return errCut
	}
	return s.MemStore.PutMemories(ctx, ms)
}

func (s *flakyStore) AppendDecisions(ctx context.Context, ds []memory.Decision) error {
	if s.failLogs > 0 {
		s.failLogs--
		return errCut
	}
	return s.MemStore.AppendDecisions(ctx, ds)
}

// flakyJudge fails its failAt-th call (counting from 1) once.
type flakyJudge struct {
	next          memory.Judge
	calls, failAt int
}

func (j *flakyJudge) Judge(ctx context.Context, c memory.Candidate, ns []memory.Neighbor) (memory.Judgement, error) {
	j.calls++
	if j.calls == j.failAt {
		return memory.Judgement{}, errCut
	}
	return j.next.Judge(ctx, c, ns)
}

// batchRequests are merge and store requests whose decisions depend on
// the ones before them: exact repeats, paraphrases the judge merges, a
// contradiction, and memories of their own.
func batchRequests() []ledger.Request {
	c := func(kind memory.Kind, content string) memory.Candidate {
		return memory.Candidate{Kind: kind, Content: content}
	}
	merge := func(i int, cs ...memory.Candidate) ledger.Request {
		return ledger.Request{ID: fmt.Sprintf("merge/s%d", i), Tenant: "acme", Op: ledger.OpMerge,
			EpisodeID: fmt.Sprintf("ep%d", i), WorkflowID: fmt.Sprintf("session/s%d", i), Candidates: cs}
	}
	return []ledger.Request{
		merge(1, c(memory.KindPreference, "Give report timestamps in UTC."),
			c(memory.KindLesson, "The CSV export is GBK-encoded: decode it as GBK before parsing, not as UTF-8.")),
		merge(2, c(memory.KindPreference, "give report timestamps in UTC"),
			c(memory.KindFact, "The staging database is reached through the bastion host bastion.acme.dev.")),
		{ID: "store/1", Tenant: "acme", Op: ledger.OpStore, Candidates: []memory.Candidate{
			c(memory.KindRule, "Never deploy to production on Fridays.")}},
		merge(3, c(memory.KindLesson, "Decode the CSV export as GBK before parsing it; reading it as UTF-8 garbles the Chinese column names."),
			c(memory.KindPreference, "Give report timestamps in UTC.")),
		merge(4, c(memory.KindRule, "never deploy to production on fridays"),
			c(memory.KindFact, "The staging database is reached through the bastion host bastion.acme.dev.")),
	}
}

// outcome is what a batch decided and left stored, comparable across runs.
type outcome struct {
	replies []string
	stored  []string
}

func outcomeOf(t *testing.T, f *fixture, replies []ledger.Reply) outcome {
	t.Helper()
	var o outcome
	for _, r := range replies {
		if r.Error != "" {
			t.Fatalf("request %s failed: %s", r.RequestID, r.Error)
		}
		for _, d := range r.Decisions {
			line := fmt.Sprintf("%s %s %s target=%s", d.ID, d.Action, d.Verdict, d.TargetID)
			for _, m := range d.After {
				line += fmt.Sprintf(" | %s v%d %s %q %v", m.ID, m.Version, m.Status, m.Content, m.Sources)
			}
			o.replies = append(o.replies, line)
		}
	}
	ctx := context.Background()
	ms, err := f.store.Memories(ctx, memory.MemoryFilter{Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		h, err := f.store.History(ctx, "acme", m.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range h {
			o.stored = append(o.stored, fmt.Sprintf("%s v%d %s %q %v by %s", v.ID, v.Version, v.Status, v.Content, v.Sources, v.DecisionID))
		}
	}
	slices.Sort(o.stored)
	ds, err := f.store.Decisions(ctx, memory.DecisionFilter{Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		o.stored = append(o.stored, fmt.Sprintf("decision %s %s", d.ID, d.Action))
	}
	return o
}

// oneByOne is the reference: each request merged alone, in order.
func oneByOne(t *testing.T) outcome {
	f := newFixture(t)
	var replies []ledger.Reply
	for _, req := range batchRequests() {
		replies = append(replies, run[[]ledger.Reply](t, f, f.acts.MergeRequests,
			activities.MergeRequestsInput{Requests: []ledger.Request{req}, Now: now})...)
	}
	return outcomeOf(t, f, replies)
}

func sameOutcome(t *testing.T, what string, got, want outcome) {
	t.Helper()
	if g, w := strings.Join(got.replies, "\n"), strings.Join(want.replies, "\n"); g != w {
		t.Errorf("%s: the replies differ from applying the requests one by one:\n got: %s\nwant: %s", what, g, w)
	}
	if g, w := strings.Join(got.stored, "\n"), strings.Join(want.stored, "\n"); g != w {
		t.Errorf("%s: the stores differ from applying the requests one by one:\n got: %s\nwant: %s", what, g, w)
	}
}

// TestMergeBatchMatchesOneByOne merges the requests as one batch: the
// decisions, the versions and the log are those of merging them one by
// one.
func TestMergeBatchMatchesOneByOne(t *testing.T) {
	want := oneByOne(t)
	if len(want.replies) != 9 || !slices.ContainsFunc(want.replies, func(s string) bool { return strings.Contains(s, " duplicate ") }) {
		t.Fatalf("the reference run made %d decisions, none a duplicate: the requests do not depend on each other\n%s",
			len(want.replies), strings.Join(want.replies, "\n"))
	}
	f := newFixture(t)
	in := activities.MergeRequestsInput{Requests: batchRequests(), Now: now}
	sameOutcome(t, "one batch", outcomeOf(t, f, run[[]ledger.Reply](t, f, f.acts.MergeRequests, in)), want)
	// And again, as a retry of a batch that completed: nothing changes.
	sameOutcome(t, "the batch retried", outcomeOf(t, f, run[[]ledger.Reply](t, f, f.acts.MergeRequests, in)), want)
}

// TestMergeBatchCutShortResumes stops a batch at each point its writes can
// be cut (a worker stopped there, or a store gone), retries it as Temporal
// would, and requires the outcome of merging the requests one by one:
// nothing applied twice, nothing lost.
func TestMergeBatchCutShortResumes(t *testing.T) {
	want := oneByOne(t)
	cases := []struct {
		name string
		cut  func(*flakyStore, *flakyJudge)
		// logged is how many decisions the cut-short attempt leaves logged.
		logged func(all int) int
	}{
		{"before the decisions are logged", func(s *flakyStore, _ *flakyJudge) { s.failLogs = 1 },
			func(int) int { return 0 }},
		{"after the decisions are logged, before their versions are stored", func(s *flakyStore, _ *flakyJudge) { s.failPuts = 1 },
			func(all int) int { return all }},
		{"by a judge that fails midway", func(_ *flakyStore, j *flakyJudge) { j.failAt = 1 },
			func(all int) int { return -1 }}, // those before the failure
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			backing := memory.NewMemStore()
			store := &flakyStore{MemStore: backing}
			f := newFixtureOn(t, backing, store, false)
			judge := &flakyJudge{next: f.acts.Judge}
			f.acts.Judge = judge
			tc.cut(store, judge)
			in := activities.MergeRequestsInput{Requests: batchRequests(), Now: now}
			if _, err := f.env.ExecuteActivity(f.acts.MergeRequests, in); err == nil {
				t.Fatal("the cut-short batch succeeded")
			}
			ds, err := backing.Decisions(context.Background(), memory.DecisionFilter{Tenant: "acme"})
			if err != nil {
				t.Fatal(err)
			}
			switch n := tc.logged(len(want.replies)); {
			case n >= 0 && len(ds) != n:
				t.Fatalf("the cut-short batch logged %d decisions, want %d", len(ds), n)
			case n < 0 && (len(ds) == 0 || len(ds) >= len(want.replies)):
				t.Fatalf("the batch whose judge failed midway logged %d decisions, want those before the failure", len(ds))
			}
			got := outcomeOf(t, f, run[[]ledger.Reply](t, f, f.acts.MergeRequests, in))
			sameOutcome(t, "the retried batch", got, want)
		})
	}
}

// TestSettleStoresWhatAFailedBatchLogged cuts a batch short after it
// logged its decisions and before it stored their versions, and lets it
// fail for good: its retries are over. The ledger settles it (Settle)
// before its next batch, which merges into what the first decided; a
// client's retry of the first batch, after the ledger forgot its reply,
// replays the logged decisions. The outcome is that of merging every
// request one by one; without settling, the next batch decides from a
// store that lacks the first one's versions.
func TestSettleStoresWhatAFailedBatchLogged(t *testing.T) {
	want := oneByOne(t)
	backing := memory.NewMemStore()
	store := &flakyStore{MemStore: backing}
	f := newFixtureOn(t, backing, store, false)
	reqs := batchRequests()
	first, next := reqs[:2], reqs[2:]

	store.failPuts = 1
	if _, err := f.env.ExecuteActivity(f.acts.MergeRequests, activities.MergeRequestsInput{Requests: first, Now: now}); err == nil {
		t.Fatal("the cut-short batch succeeded")
	}
	var ids []string
	for _, req := range first {
		ids = append(ids, req.MergeDecisionIDs()...)
	}
	// Twice: a retried Settle changes nothing more.
	for range 2 {
		if _, err := f.env.ExecuteActivity(f.acts.Settle, activities.SettleInput{Tenant: "acme", DecisionIDs: ids}); err != nil {
			t.Fatalf("Settle: %v", err)
		}
	}
	replies := run[[]ledger.Reply](t, f, f.acts.MergeRequests, activities.MergeRequestsInput{Requests: next, Now: now})
	retried := run[[]ledger.Reply](t, f, f.acts.MergeRequests, activities.MergeRequestsInput{Requests: first, Now: now})
	sameOutcome(t, "settled, then the next batch, then the first retried", outcomeOf(t, f, append(retried, replies...)), want)

	if _, err := f.env.ExecuteActivity(f.acts.Settle, activities.SettleInput{Tenant: "", DecisionIDs: ids}); err == nil || !strings.Contains(err.Error(), "tenant") {
		t.Fatalf("Settle without a tenant = %v, want an error naming the tenant", err)
	}
}

// TestMergeBatchReadsNeighboursOnce merges a batch whose every candidate
// has neighbours to judge: the batch reads them from the store in one
// query before it begins, where each candidate read its own.
func TestMergeBatchReadsNeighboursOnce(t *testing.T) {
	backing := memory.NewMemStore()
	store := storetest.NewCountingStore(backing)
	f := newFixtureOn(t, backing, store, false)
	run[[]ledger.Reply](t, f, f.acts.MergeRequests, activities.MergeRequestsInput{Requests: batchRequests(), Now: now})
	c := func(kind memory.Kind, content string) memory.Candidate {
		return memory.Candidate{Kind: kind, Content: content}
	}
	again := []ledger.Request{
		{ID: "merge/t1", Tenant: "acme", Op: ledger.OpMerge, EpisodeID: "ep-t1", WorkflowID: "session/t1", Candidates: []memory.Candidate{
			c(memory.KindPreference, "Report timestamps should be given in UTC, please."),
			c(memory.KindLesson, "Decode the CSV export as GBK before parsing; UTF-8 garbles its column names.")}},
		{ID: "merge/t2", Tenant: "acme", Op: ledger.OpMerge, EpisodeID: "ep-t2", WorkflowID: "session/t2", Candidates: []memory.Candidate{
			c(memory.KindFact, "The staging database is reached through bastion.acme.dev, the bastion host."),
			c(memory.KindRule, "Never deploy to production on a Friday afternoon.")}},
	}
	store.Reset()
	replies := run[[]ledger.Reply](t, f, f.acts.MergeRequests, activities.MergeRequestsInput{Requests: again, Now: now})
	judged := 0
	for _, r := range replies {
		if r.Error != "" {
			t.Fatalf("request %s failed: %s", r.RequestID, r.Error)
		}
		for _, d := range r.Decisions {
			if d.Judge != "" && d.Judge != "prefilter" { // neither an exact repeat nor without neighbours
				judged++
			}
		}
	}
	if judged != 4 {
		t.Fatalf("the judge saw %d of the 4 candidates: the test needs every one to have neighbours", judged)
	}
	if n := store.ReadsByID(); n != 1 {
		t.Errorf("the batch read memories by ID %d times, want once (before it began)", n)
	}
}
