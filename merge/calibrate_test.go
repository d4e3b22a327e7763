package merge

import (
	"context"
	"testing"

	"github.com/hindsight-memory/hindsight/llm/offline"
	"github.com/hindsight-memory/hindsight/memory"
)

// TestOfflineThresholdCalibrated keeps OfflineThreshold honest: with the
// offline embedder, every labelled pair that should merge (duplicate,
// refines, conflicts) must score at least the threshold, or the pre-filter
// would hide it from the judge. If the embedder changes, this fails and
// SuggestThreshold gives the new value. A low threshold leaves keeping
// distinct memories apart to the judge; TestOfflineJudgeQuality checks
// that on every pair, whatever its similarity.
func TestOfflineThresholdCalibrated(t *testing.T) {
	pairs, err := LoadPairs(pairsPath)
	if err != nil {
		t.Fatal(err)
	}
	e := offline.NewEmbedder(0)
	if err := ScorePairs(context.Background(), e, pairs); err != nil {
		t.Fatal(err)
	}
	th := ThresholdFor(e.Model())
	if th != OfflineThreshold {
		t.Fatalf("ThresholdFor(%q) = %v, want OfflineThreshold", e.Model(), th)
	}
	suggested, distinctPassing, err := SuggestThreshold(pairs, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pairs {
		if p.Label != memory.VerdictDistinct && *p.Similarity < th {
			t.Errorf("%s (%s) scores %.3f with %s, below OfflineThreshold %.2f: recalibrate (suggested %.2f)", p.ID, p.Label, *p.Similarity, e.Model(), th, suggested)
		}
	}
	rep, err := Evaluate(context.Background(), NewOfflineJudge(OfflineOptions{}), pairs)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Similarity {
		t.Logf("%-9s n=%2d min %.3f p10 %.3f median %.3f max %.3f", s.Label, s.N, s.Min, s.P10, s.Median, s.Max)
	}
	t.Logf("%s: full-recall threshold %.2f; %.0f%% of distinct pairs also reach the judge", e.Model(), suggested, 100*distinctPassing)
}
