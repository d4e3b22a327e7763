package recall

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hindsight-memory/hindsight/index"
	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/lang/lexicon"
	"github.com/hindsight-memory/hindsight/memory"
)

// relevanceOf recalls q with the threshold off and returns each memory's
// absolute relevance.
func relevanceOf(t *testing.T, e *env, q string) map[string]float64 {
	t.Helper()
	r := e.recall(t, memory.Query{Tenant: "acme", Text: q, NoParse: true})
	out := map[string]float64{}
	for _, res := range r.Results {
		out[res.Memory.ID] = res.Breakdown.Relevance
	}
	return out
}

// TestRelevanceIsCalibrated checks, for one query in English and one in
// Chinese, that a memory about what the query asks is relevant, a memory
// that shares a topic word but not the question is weak, and an unrelated
// one is not relevant: the same scale whatever else is stored.
func TestRelevanceIsCalibrated(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		query                     string
		relevant, weak, unrelated string
	}{
		{"en", "which time zone should report timestamps use?",
			"Give report timestamps in UTC, with the time zone named.",
			"Reports go to ops-leads@example.com every Monday.",
			"Never deploy billing-api on Fridays."},
		{"zh", "报表里的时间用什么时区？",
			"报表里的时间统一用北京时间，时区写成 UTC+8。",
			"报表每周一发给运营。",
			"周五不要发布 billing-api。"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{NoUsage: true, MinRelevance: -1})
			e.write(t, mem("acme", "rel", tc.relevant, 0), mem("acme", "weak", tc.weak, 0), mem("acme", "none", tc.unrelated, 0))
			got := relevanceOf(t, e, tc.query)
			if got["rel"] < DefaultMinRelevance {
				t.Errorf("relevant memory: relevance %.2f, want at least %.2f", got["rel"], DefaultMinRelevance)
			}
			if w := got["weak"]; w >= got["rel"] || w >= 0.5 {
				t.Errorf("weakly related memory: relevance %.2f, want below the relevant one (%.2f) and below 0.5", w, got["rel"])
			}
			if u := got["none"]; u >= DefaultMinRelevance {
				t.Errorf("unrelated memory: relevance %.2f, want below %.2f", u, DefaultMinRelevance)
			}

			// With the threshold on, the unrelated memory is not returned,
			// and a query nothing stored speaks to gets nothing.
			on := newEnv(t, Config{NoUsage: true})
			on.write(t, mem("acme", "rel", tc.relevant, 0), mem("acme", "none", tc.unrelated, 0))
			r := on.recall(t, memory.Query{Tenant: "acme", Text: tc.query, NoParse: true})
			if len(r.Results) == 0 || r.Results[0].Memory.ID != "rel" || !r.Results[0].Breakdown.Relevant {
				t.Fatalf("threshold on: results %+v, want the relevant memory first, marked relevant", r.Results)
			}
			for _, res := range r.Results {
				if res.Memory.ID == "none" {
					t.Errorf("threshold on: the unrelated memory was returned (relevance %.2f)", res.Breakdown.Relevance)
				}
			}
			nothing := on.recall(t, memory.Query{Tenant: "acme", Text: "what is the capital of France?", NoParse: true})
			if len(nothing.Results) != 0 || nothing.Text != NothingRelevant {
				t.Errorf("an unrelated query got %d results and text %q, want none and the nothing-relevant text", len(nothing.Results), nothing.Text)
			}
		})
	}
}

// TestRecencyNeverMakesRelevant: a fresh, confident, much-used memory that
// does not speak to the query stays out, however its other signals score.
func TestRecencyNeverMakesRelevant(t *testing.T) {
	e := newEnv(t, Config{NoUsage: true})
	fresh := mem("acme", "fresh", "Never deploy billing-api on Fridays.", 0)
	fresh.Confidence, fresh.RecallCount = 0.9, 50
	old := mem("acme", "old", "Give report timestamps in UTC.", 400*24*3600e9)
	old.Confidence = 0.3
	e.write(t, fresh, old)
	r := e.recall(t, memory.Query{Tenant: "acme", Text: "report timestamps time zone", NoParse: true})
	if len(r.Results) != 1 || r.Results[0].Memory.ID != "old" {
		t.Fatalf("results %+v, want only the old relevant memory", r.Results)
	}
}

// TestCrossLanguageRecall needs the dictionaries (scripts/fetch-dicts.sh,
// run by make test): a Chinese query finds an English memory and the
// reverse.
func TestCrossLanguageRecall(t *testing.T) {
	lx := lexicon.Default()
	if lx == nil {
		if os.Getenv("HINDSIGHT_REQUIRE_DICTS") != "" {
			t.Fatalf("dictionaries not installed (%v), though make test installs them", lexicon.Err())
		}
		t.Skipf("dictionaries not installed (%v); make dicts installs them", lexicon.Err())
	}
	store, vectors := memory.NewMemStore(), memory.NewMemIndex(64)
	e := &env{store: store, index: vectors, emb: &wordEmbedder{dim: 64}}
	eng, err := New(Config{NoUsage: true}, Deps{Memories: store, Episodes: store, Index: vectors, Embedder: e.emb, Lexicon: lx, Clock: fixedClock(base)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	e.engine = eng
	if e.indexer, err = index.New(index.Deps{Memories: store, Index: vectors, Embedder: e.emb, Cache: eng}, 0); err != nil {
		t.Fatal(err)
	}
	e.write(t,
		mem("acme", "en", "Give report timestamps in UTC.", 0),
		mem("acme", "zh", "导出 CSV 文件用普通 UTF-8 编码，不带 BOM。", 0),
		mem("acme", "other", "Never deploy billing-api on Fridays.", 0))
	for q, want := range map[string]string{
		"报表时间用什么时区":                             "en",
		"what encoding should CSV exports use?": "zh",
	} {
		r := e.recall(t, memory.Query{Tenant: "acme", Text: q, NoParse: true})
		if len(r.Results) == 0 || r.Results[0].Memory.ID != want {
			t.Errorf("%q: results %+v, want %s first", q, r.Results, want)
		}
		for _, res := range r.Results {
			if res.Memory.ID == "other" {
				t.Errorf("%q: the unrelated memory was returned", q)
			}
		}
	}
}

// TestContextFitsItsBudget: the block holds the most relevant memories
// that fit max_tokens, shortens a counter-example before leaving a
// memory out, and says how many it left out.
func TestContextFitsItsBudget(t *testing.T) {
	e := newEnv(t, Config{NoUsage: true})
	long := strings.Repeat("the parser failed with UnicodeDecodeError at byte 0xb5 ", 12)
	var ms []memory.Memory
	for i := range 8 {
		m := mem("acme", fmt.Sprintf("m%d", i), fmt.Sprintf("When importing sales CSV files, detect the encoding first (variant %d): try utf-8-sig, then gbk.", i), 0)
		m.Kind, m.CounterExample = memory.KindLesson, long
		ms = append(ms, m)
	}
	e.write(t, ms...)
	q := memory.Query{Tenant: "acme", Text: "importing sales CSV encoding", NoParse: true, TopK: 8}
	full := e.recall(t, q)
	if full.Omitted != 0 || len(full.Results) != 8 {
		// 8 short lessons fit the default budget once their long
		// counter-examples are shortened.
		t.Logf("default budget: %d results, %d omitted", len(full.Results), full.Omitted)
	}
	q.MaxTokens = 150
	small := e.recall(t, q)
	if n := lang.Tokens(small.Text); n > 150 {
		t.Errorf("the block has %d tokens, over the budget of 150:\n%s", n, small.Text)
	}
	if small.Omitted == 0 || !strings.Contains(small.Text, "left out") {
		t.Errorf("omitted %d, text:\n%s\nwant memories left out and said so", small.Omitted, small.Text)
	}
	if !strings.Contains(small.Text, "[1]") || strings.Contains(small.Text, long) {
		t.Errorf("the first memory must be shown, its counter-example shortened:\n%s", small.Text)
	}
	if len(small.Results) != 8 {
		t.Errorf("the structured results are %d, want all 8: the budget is the block's", len(small.Results))
	}
}

// TestCurrentBeforeSuperseded: with include_superseded, a replaced
// preference comes after the one that replaced it, however it scores.
func TestCurrentBeforeSuperseded(t *testing.T) {
	e := newEnv(t, Config{NoUsage: true})
	old := mem("acme", "old", "Report timestamps use UTC, in every report timestamp field.", 0)
	old.Status, old.SupersededBy, old.Confidence = memory.StatusSuperseded, "new", 0.9
	cur := mem("acme", "new", "Report times use Beijing time.", 0)
	cur.Supersedes, cur.Confidence = []string{"old"}, 0.4
	e.write(t, old, cur)
	r := e.recall(t, memory.Query{Tenant: "acme", Text: "report timestamps time zone", NoParse: true, IncludeSuperseded: true})
	if len(r.Results) != 2 || r.Results[0].Memory.ID != "new" {
		t.Fatalf("results %v, want the current memory first", ids(r))
	}
	if d := e.recall(t, memory.Query{Tenant: "acme", Text: "report timestamps time zone", NoParse: true}); len(d.Results) != 1 || d.Results[0].Memory.ID != "new" {
		t.Fatalf("default recall %v, want only the current memory", ids(d))
	}
}

// TestNamesWrittenJoined: a memory that writes a setting as code names it
// ("readinessProbe timeoutSeconds") answers a query that writes its words
// apart, and a query that writes the name joined finds a memory that
// writes it apart.
func TestNamesWrittenJoined(t *testing.T) {
	e := newEnv(t, Config{NoUsage: true, MinRelevance: -1})
	e.write(t, mem("acme", "joined", "Fix: readinessProbe timeoutSeconds 1 → 5 and failureThreshold 1 → 3.", 0),
		mem("acme", "apart", "The retry budget is set by max retries in the worker config.", 0))
	if got := relevanceOf(t, e, "the readiness probe keeps timing out, how long should its timeout be in seconds?"); got["joined"] < DefaultMinRelevance {
		t.Errorf("the memory naming readinessProbe: relevance %.2f to a query about the readiness probe, want at least %.2f", got["joined"], DefaultMinRelevance)
	}
	if got := relevanceOf(t, e, "what should maxRetries be?"); got["apart"] < DefaultMinRelevance {
		t.Errorf("the memory about max retries: relevance %.2f to a query naming maxRetries, want at least %.2f", got["apart"], DefaultMinRelevance)
	}
}
