package offline

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/eval/scenarios"
	"github.com/hindsight-memory/hindsight/llm"
	"github.com/hindsight-memory/hindsight/memory"
)

// countingLLM is a scripted model that answers every extraction with an
// empty one and counts the prompt tokens it was sent.
type countingLLM struct{ tokens, calls int }

func (c *countingLLM) Chat(_ context.Context, r memory.ChatRequest) (memory.ChatResponse, error) {
	c.calls++
	c.tokens += llm.EstimateTokens(r.System) + llm.EstimateTokens(r.User)
	return memory.ChatResponse{Model: "scripted", Content: `{"task":"t","task_type":"other","entities":[],"steps":[],"failures":[],"outcome":"success","feedback":[],"candidates":[]}`}, nil
}

func TestChatterIsLeftOut(t *testing.T) {
	tr := session(t,
		user("Export the March orders to orders.csv."),
		assistant("On it."),
		call("python", code("df.to_csv('orders.csv')"), "ok", ""),
		user("great, thanks!"),
		user("From now on, always gzip the exports."),
		assistant("Done: orders.csv.gz, 1,204 rows, gzipped as you asked from now on."),
	)
	var got []int
	for i := range tr.Events {
		if Chatter(tr, i) {
			got = append(got, i)
		}
	}
	// "On it." and "great, thanks!"; never the request, the call, the
	// standing instruction or the closing summary.
	if len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Errorf("chatter events %v, want [1 3]", got)
	}
}

// TestChatterSavesTokens measures, on the development scenario corpus
// when it is next to the repository, the prompt tokens the chatter filter
// saves the LLM extractor, with a scripted model counting them.
func TestChatterSavesTokens(t *testing.T) {
	path := os.Getenv("HINDSIGHT_SCENARIOS")
	if path == "" {
		path = filepath.Join("..", "..", "..", "shared", "bench", "scenarios", "dev.json")
	}
	c, err := scenarios.Load(path)
	if err != nil {
		t.Skipf("scenario corpus not found (%v); set HINDSIGHT_SCENARIOS", err)
	}
	var with, without countingLLM
	sessions, skipped, skippedExpected := 0, 0, 0
	for _, s := range c.Scenarios {
		for _, ss := range s.Sessions {
			tr := ss.Transcript
			if err := tr.Normalize(memory.DefaultTenant, time.Now()); err != nil {
				t.Fatal(err)
			}
			for _, x := range []*llm.Extractor{llm.NewExtractor(&without), llm.NewExtractor(&with, llm.WithChatter(Chatter), llm.WithoutModelWhen(NothingToLearn, NewExtractor()))} {
				if _, err := x.Extract(context.Background(), tr); err != nil {
					t.Fatal(err)
				}
			}
			sessions++
			if NothingToLearn(tr) {
				skipped++
				if len(ss.Expect) > 0 {
					skippedExpected++
					t.Logf("skipped although something was expected: %s", tr.SessionID)
				}
			}
		}
	}
	saved := without.tokens - with.tokens
	t.Logf("%d sessions: %d prompt tokens in %d model calls without the filters, %d in %d calls with them: %d saved (%.1f%%)",
		sessions, without.tokens, without.calls, with.tokens, with.calls, saved, 100*float64(saved)/float64(without.tokens))
	t.Logf("%d sessions extracted without the model, %d of them with memories expected", skipped, skippedExpected)
	if saved <= 0 {
		t.Errorf("the filters saved %d tokens", saved)
	}
	if skippedExpected*10 > skipped {
		t.Errorf("%d of the %d sessions kept from the model held memories a careful person would keep", skippedExpected, skipped)
	}
}
