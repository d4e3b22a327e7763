package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/examples"
	"github.com/hindsight-memory/hindsight/lang/lexicon"
	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/recall"
)

// exampleArgs turns an example transcript into session_end arguments.
func exampleArgs(t *testing.T, name string) map[string]any {
	t.Helper()
	for _, s := range examples.All() {
		if s.Name != name {
			continue
		}
		tr, err := memory.ParseTranscript(s.Data, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range tr.Events {
			tr.Events[i].TS = time.Time{} // sent without times: the session happens now
		}
		return map[string]any{"session_id": tr.SessionID, "events": eventArgs(tr.Events), "task": tr.Task, "outcome": string(tr.Outcome)}
	}
	t.Fatalf("no example %s", name)
	return nil
}

// TestRecallSaysNothingRelevant: after the CSV example, a question about
// something else entirely gets no results over MCP, and a context block
// that says so plainly; a question the example answers still gets it.
func TestRecallSaysNothingRelevant(t *testing.T) {
	st := startTestDev(t, t.TempDir())
	defer st.Close()
	s := connect(t, st.mcpURL())
	end := endSession(t, s, exampleArgs(t, "01_csv_import_gbk.json"))
	if len(end.Memories) == 0 {
		t.Fatalf("the example distilled nothing: %+v", end)
	}
	rec := call[mcpserver.RecallOutput](t, s, mcpserver.ToolRecall, map[string]any{"query": "what is the capital of France"})
	if len(rec.Results) != 0 || rec.Context != recall.NothingRelevant {
		t.Fatalf("an unrelated query got %d results and context %q, want none and %q", len(rec.Results), rec.Context, recall.NothingRelevant)
	}
	rec = call[mcpserver.RecallOutput](t, s, mcpserver.ToolRecall, map[string]any{"query": "how do I read the sales CSV with Chinese columns"})
	// The fact about the file's Chinese columns answers it too; the gbk
	// lesson must be among the first two.
	if !slices.ContainsFunc(rec.Results[:min(2, len(rec.Results))], func(r mcpserver.RecallItem) bool { return strings.Contains(r.Content+r.CounterExample, "gbk") }) {
		t.Fatalf("the CSV question got %+v, want the gbk lesson among the first two", rec.Results)
	}
	if b := rec.Results[0].Breakdown; !b.Relevant || b.Relevance < recall.DefaultMinRelevance {
		t.Errorf("the first result's breakdown %+v, want its relevance and that it passed the threshold", b)
	}
}

// TestRecallAcrossLanguages: a Chinese question finds the English
// example's UTC preference, and an English question the Chinese
// example's Excel rule, over MCP.
func TestRecallAcrossLanguages(t *testing.T) {
	if lexicon.Default() == nil {
		t.Skipf("dictionaries not installed (%v); make dicts installs them", lexicon.Err())
	}
	st := startTestDev(t, t.TempDir())
	defer st.Close()
	s := connect(t, st.mcpURL())
	ask := func(q, want string) {
		t.Helper()
		rec := call[mcpserver.RecallOutput](t, s, mcpserver.ToolRecall, map[string]any{"query": q})
		for i, r := range rec.Results {
			if i < 3 && strings.Contains(r.Content, want) {
				return
			}
		}
		t.Errorf("%q: results %+v, want a memory with %q among the first three", q, rec.Results, want)
	}
	// Only Chinese memories: an English question finds them.
	endSession(t, s, exampleArgs(t, "02_weekly_report_zh.json"))
	ask("what time should the reports use?", "UTC")
	// Then the English example: a Chinese question finds its lesson.
	endSession(t, s, exampleArgs(t, "01_csv_import_gbk.json"))
	ask("销售数据的 CSV 文件用什么编码读取？", "gbk")
}
