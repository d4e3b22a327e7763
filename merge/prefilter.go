package merge

import (
	"strings"

	"github.com/hindsight-memory/hindsight/memory"
)

// Default pre-filter thresholds: the least cosine similarity a live memory
// needs to reach the judge. The scale depends on the embedder, so there is
// one default per kind of embedder; calibrate others with ScorePairs and
// SuggestThreshold on the labelled set.
const (
	// DefaultThreshold is the seeds' threshold for neural embeddings
	// (bge, text-embedding-3-*, …).
	DefaultThreshold = 0.85

	// OfflineThreshold is the threshold for the offline lexical embedder
	// (llm/offline, hashed character n-grams), whose similarities run much
	// lower than a neural model's for the same paraphrase. Calibrated on
	// testdata/merge/pairs.jsonl with ScorePairs and SuggestThreshold
	// (offline-ngram-v1-d384): the pairs that should merge score 0.409 to
	// 1.0 (median: duplicates 0.761, refinements 0.696, conflicts 0.727),
	// distinct pairs 0.021 to 0.831 (median 0.544). 0.40 lets every pair
	// that should merge reach the judge; at 0.85 only 8 of 71 would. The
	// distinct pairs that also pass (84%) cost a judge call each, and the
	// offline judge is cheap and does not merge them.
	OfflineThreshold = 0.40
)

// ThresholdFor returns the default pre-filter threshold for an embedding
// model: OfflineThreshold for the offline lexical embedder (models named
// "offline-…"), DefaultThreshold for anything else.
func ThresholdFor(embedderModel string) float64 {
	if strings.HasPrefix(embedderModel, "offline-") {
		return OfflineThreshold
	}
	return DefaultThreshold
}

// Prefilter keeps the neighbours worth judging: live memories with
// similarity at least threshold, each memory once (its best similarity),
// most similar first (ties by ID), at most max of them (max ≤ 0: all).
// The vector search already restricts tenant, kind and status; Prefilter
// drops non-live neighbours again so that a stale index cannot offer a
// superseded memory as a merge target.
func Prefilter(neighbors []memory.Neighbor, threshold float64, max int) []memory.Neighbor {
	best := map[string]int{}
	var out []memory.Neighbor
	for _, n := range neighbors {
		if n.Memory.Status != memory.StatusLive || n.Similarity < threshold {
			continue
		}
		if i, ok := best[n.Memory.ID]; ok {
			if n.Similarity > out[i].Similarity {
				out[i] = n
			}
			continue
		}
		best[n.Memory.ID] = len(out)
		out = append(out, n)
	}
	out = sortedNeighbors(out)
	if max > 0 && len(out) > max {
		out = out[:max]
	}
	return out
}
