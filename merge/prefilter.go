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
	// lower than a neural model's for the same paraphrase, and lowest when
	// a short statement changes its value and its wording at once
	// ("摘要不超过 200 字" → "以后摘要控制在 150 字以内": 0.157; "Always
	// give report timestamps in UTC" → "Reports should use Beijing time
	// (UTC+8), not UTC": 0.231). Calibrated on testdata/merge/pairs.jsonl
	// (170 pairs) with ScorePairs and SuggestThreshold
	// (offline-ngram-v1-d384): the pairs that should merge score 0.157 to
	// 1.0 (median: duplicates 0.735, refinements 0.696, conflicts 0.615),
	// distinct pairs 0.021 to 0.831 (median 0.521). 0.15 lets every pair
	// that should merge reach the judge; 0.40 would hide 9 of 119, among
	// them the seeds' time-zone change. A low threshold is safe because
	// the judge, not the pre-filter, keeps distinct memories apart: it
	// merges no distinct labelled pair, and run on every text of the set
	// against every other pair's candidate (57,460 comparisons, whatever
	// their similarity) each of its 157 merges is a genuine restatement or
	// refinement. It costs judge calls, bounded by the neighbours searched:
	// 6.7% of those comparisons score 0.15 or more (1.4% at 0.40).
	OfflineThreshold = 0.15
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
