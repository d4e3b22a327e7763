package merge

import "github.com/hindsight-memory/hindsight/memory"

// Default pre-filter thresholds: the least cosine similarity a live memory
// needs to reach the judge. The scale depends on the embedder, so there is
// one default per kind of embedder; calibrate others with ScorePairs and
// SuggestThreshold on the labelled set.
const (
	// DefaultThreshold is the seeds' threshold for neural embeddings
	// (bge, text-embedding-3-*, …).
	DefaultThreshold = 0.85
)

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
