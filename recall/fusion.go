package recall

import (
	"cmp"
	"slices"
)

// ranked is one candidate list: IDs with their source score, best first.
type ranked struct {
	ids    []string
	scores []float64
	weight float64 // the list's weight in the fusion
}

func (r *ranked) add(id string, score float64) {
	r.ids = append(r.ids, id)
	r.scores = append(r.scores, score)
}

// sortByScore orders the list by score, highest first, ties by ID.
func (r *ranked) sortByScore() {
	idx := make([]int, len(r.ids))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(r.scores[b], r.scores[a]); c != 0 {
			return c
		}
		return cmp.Compare(r.ids[a], r.ids[b])
	})
	ids, scores := make([]string, len(idx)), make([]float64, len(idx))
	for i, j := range idx {
		ids[i], scores[i] = r.ids[j], r.scores[j]
	}
	r.ids, r.scores = ids, scores
}

// FuseRRF is weighted reciprocal-rank fusion: a document's score is the sum,
// over the lists that hold it, of weight/(k + rank), ranks starting at 1,
// divided by the sum of weight/(k + 1) over all lists, so that first place
// in every list scores 1.
func fuseRRF(lists []ranked, k float64) map[string]float64 {
	out := map[string]float64{}
	best := 0.0
	for _, l := range lists {
		best += l.weight / (k + 1)
		for i, id := range l.ids {
			out[id] += l.weight / (k + float64(i+1))
		}
	}
	if best > 0 {
		for id := range out {
			out[id] /= best
		}
	}
	return out
}

// fuseWeighted is a weighted sum of scores normalised by each list's best
// score. A document missing from a list is given that list's lowest score:
// it ranked below the list's cut, so the lowest score bounds what it would
// have had.
func fuseWeighted(lists []ranked) map[string]float64 {
	out := map[string]float64{}
	total := 0.0
	for _, l := range lists {
		total += l.weight
		for _, id := range l.ids {
			out[id] = 0
		}
	}
	for _, l := range lists {
		if len(l.ids) == 0 || l.scores[0] <= 0 {
			continue
		}
		top, low := l.scores[0], max(l.scores[len(l.scores)-1], 0)
		have := make(map[string]bool, len(l.ids))
		for i, id := range l.ids {
			have[id] = true
			out[id] += l.weight * max(l.scores[i], 0) / top
		}
		for id := range out {
			if !have[id] {
				out[id] += l.weight * low / top
			}
		}
	}
	if total > 0 {
		for id := range out {
			out[id] /= total
		}
	}
	return out
}
