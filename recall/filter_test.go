package recall

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// filterFixture writes memories that differ in one filter field each; all
// mention "report" so every one is a candidate for the query "report".
func filterFixture(t *testing.T, e *env) {
	t.Helper()
	day := 24 * time.Hour
	lesson := mem("acme", "lesson", "report lesson about encodings", day)
	lesson.Kind = memory.KindLesson
	task := mem("acme", "task", "report built for the csv import", day)
	task.TaskType = "csv-import"
	ent := mem("acme", "entity", "report mentions the billing service", day)
	ent.Entities = []string{"  Billing-Service "}
	old := mem("acme", "old", "report from long ago", 100*day)
	sure := mem("acme", "sure", "report with high confidence", day)
	sure.Confidence = 0.9
	cold := mem("acme", "cold", "report that went cold", day)
	cold.Status = memory.StatusCold
	sup := mem("acme", "superseded", "report that was superseded", day)
	sup.Status, sup.SupersededBy = memory.StatusSuperseded, "sure"
	arch := mem("acme", "archived", "report that was archived", day)
	arch.Status = memory.StatusArchived
	gone := mem("acme", "forgotten", "report that was forgotten", day)
	gone.Status = memory.StatusForgotten
	other := mem("other", "other-tenant", "report of another tenant", day)
	e.write(t, lesson, task, ent, old, sure, cold, sup, arch, gone, other)
}

func TestFilters(t *testing.T) {
	e := newEnv(t, Config{NoUsage: true})
	filterFixture(t, e)
	live := []string{"entity", "lesson", "old", "sure", "task"}
	cases := []struct {
		name string
		q    memory.Query
		want []string
	}{
		{"tenant and live by default", memory.Query{}, live},
		{"kind", memory.Query{Kinds: []memory.Kind{memory.KindLesson}}, []string{"lesson"}},
		{"task type", memory.Query{TaskType: "csv-import"}, []string{"task"}},
		{"entity normalised", memory.Query{Entities: []string{"billing-service"}}, []string{"entity"}},
		{"entities any of", memory.Query{Entities: []string{"nope", "BILLING-SERVICE"}}, []string{"entity"}},
		{"since", memory.Query{Since: base.Add(-50 * 24 * time.Hour)}, []string{"entity", "lesson", "sure", "task"}},
		{"until", memory.Query{Until: base.Add(-50 * 24 * time.Hour)}, []string{"old"}},
		{"min confidence", memory.Query{MinConfidence: 0.8}, []string{"sure"}},
		{"include cold", memory.Query{IncludeCold: true}, append([]string{"cold"}, live...)},
		{"include superseded", memory.Query{IncludeSuperseded: true}, append(slices.Clone(live), "superseded")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := c.q
			q.Tenant, q.Text, q.TopK = "acme", "report", 50
			got := ids(e.recall(t, q))
			slices.Sort(got)
			want := slices.Clone(c.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("got %q, want %q", got, want)
			}
		})
	}
}

func TestFiltersApplyToBothSources(t *testing.T) {
	// Keyword-only and vector-only engines must filter alike.
	store := memory.NewMemStore()
	vectors := memory.NewMemIndex(64)
	e := newEnvOver(t, Config{NoUsage: true}, store, vectors)
	filterFixture(t, e)
	kwOnly, err := New(Config{NoUsage: true}, Deps{Memories: store, Clock: fixedClock(base)})
	if err != nil {
		t.Fatal(err)
	}
	defer kwOnly.Close()
	q := memory.Query{Tenant: "acme", Text: "report", TopK: 50, MinConfidence: 0.8, IncludeCold: true}
	a := ids(e.recall(t, q))
	r, err := kwOnly.Recall(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if b := ids(r); !slices.Equal(a, []string{"sure"}) || !slices.Equal(b, a) {
		t.Fatalf("hybrid %q, keyword-only %q, want [sure] from both", a, b)
	}
	// A vector hit that the keyword side cannot see still obeys the filter.
	r, err = e.engine.Recall(context.Background(), memory.Query{Tenant: "acme", Text: "zzz unrelated", TopK: 50, Kinds: []memory.Kind{memory.KindLesson}})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range r.Results {
		if res.Memory.Kind != memory.KindLesson {
			t.Fatalf("kind filter let %s (%s) through", res.Memory.ID, res.Memory.Kind)
		}
	}
}

func TestTenantIsolation(t *testing.T) {
	e := newEnv(t, Config{NoUsage: true})
	filterFixture(t, e)
	got := ids(e.recall(t, memory.Query{Tenant: "other", Text: "report", TopK: 50, IncludeCold: true, IncludeSuperseded: true}))
	if !slices.Equal(got, []string{"other-tenant"}) {
		t.Fatalf("tenant other sees %q, want only its own memory", got)
	}
	if got := ids(e.recall(t, memory.Query{Tenant: "nobody", Text: "report"})); len(got) != 0 {
		t.Fatalf("an empty tenant sees %q", got)
	}
}

func TestQueryValidation(t *testing.T) {
	e := newEnv(t, Config{NoUsage: true})
	cases := []struct {
		q    memory.Query
		want string
	}{
		{memory.Query{Text: "x"}, "tenant"},
		{memory.Query{Tenant: "a b", Text: "x"}, "tenant"},
		{memory.Query{Tenant: "acme", Text: "  "}, "text is required"},
		{memory.Query{Tenant: "acme", Text: "x", TopK: 51}, "top_k must be between 1 and 50"},
		{memory.Query{Tenant: "acme", Text: "x", TopK: -1}, "top_k"},
		{memory.Query{Tenant: "acme", Text: "x", Kinds: []memory.Kind{"memo"}}, `kind "memo"`},
		{memory.Query{Tenant: "acme", Text: "x", MinConfidence: 2}, "min_confidence"},
		{memory.Query{Tenant: "acme", Text: "x", Since: base, Until: base.Add(-time.Hour)}, "since"},
	}
	for _, c := range cases {
		_, err := e.engine.Recall(context.Background(), c.q)
		if !memory.IsInvalid(err) || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.want)) {
			t.Errorf("Recall(%+v) = %v, want EINVALID mentioning %q", c.q, err, c.want)
		}
	}
}
