package memory

import (
	"cmp"
	"context"
	"math"
	"slices"
)

// MaxHybridPerSide bounds HybridQuery.PerSide.
const MaxHybridPerSide = 1000

// ValidateHybridQuery checks q against an index of dimension dim.
func ValidateHybridQuery(op string, dim int, q HybridQuery) error {
	if err := q.Filter.Validate(op); err != nil {
		return err
	}
	if q.PerSide < 1 || q.PerSide > MaxHybridPerSide {
		return Invalidf(op, "per_side must be between 1 and %d, got %d", MaxHybridPerSide, q.PerSide)
	}
	if q.Dense != nil && len(q.Dense) != dim {
		return Invalidf(op, "query vector has dimension %d, the index has dimension %d", len(q.Dense), dim)
	}
	for _, x := range q.Dense {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return Invalidf(op, "query vector has NaN or infinite components")
		}
	}
	if q.Dense == nil && q.Sparse.IsZero() {
		return Invalidf(op, "give a dense query vector, a sparse one, or both")
	}
	if !(q.DenseWeight >= 0 && q.DenseWeight <= 1) {
		return Invalidf(op, "dense_weight must lie between 0 and 1, got %v", q.DenseWeight)
	}
	return q.Sparse.Validate(op, "the sparse query")
}

// ExactHybrid answers a hybrid search exactly over docs, which must
// already pass q.Filter and carry their vectors: it scores every document
// on both sides, keeps each side's best q.PerSide and returns their union
// as HybridSearcher specifies. MemIndex uses it, and store/local on
// partitions small enough to scan.
func ExactHybrid(docs []VectorDoc, q HybridQuery) []HybridHit {
	all := make([]HybridHit, 0, len(docs))
	for _, d := range docs {
		h := HybridHit{Doc: d}
		if q.Dense != nil && len(d.Vector) == len(q.Dense) {
			h.Dense = Cosine(q.Dense, d.Vector)
		}
		h.Sparse = q.Sparse.Dot(d.Sparse)
		all = append(all, h)
	}
	return UnionHybrid(all, q)
}

// UnionHybrid ranks scored candidates on each side, keeps each side's best
// q.PerSide (a sparse side only among documents sharing a term with the
// query), sets the ranks, drops documents neither side kept, zeroes the
// score of a side that did not keep a document, strips the vectors and
// orders the union by FuseHybrid.
func UnionHybrid(hits []HybridHit, q HybridQuery) []HybridHit {
	byID := func(a, b HybridHit) int { return cmp.Compare(a.Doc.ID, b.Doc.ID) }
	if q.Dense != nil {
		slices.SortFunc(hits, func(a, b HybridHit) int {
			if c := cmp.Compare(b.Dense, a.Dense); c != 0 {
				return c
			}
			return byID(a, b)
		})
		for i := range min(q.PerSide, len(hits)) {
			hits[i].DenseRank = i + 1
		}
	}
	if !q.Sparse.IsZero() {
		slices.SortFunc(hits, func(a, b HybridHit) int {
			if c := cmp.Compare(b.Sparse, a.Sparse); c != 0 {
				return c
			}
			return byID(a, b)
		})
		for i := range min(q.PerSide, len(hits)) {
			if hits[i].Sparse <= 0 {
				break
			}
			hits[i].SparseRank = i + 1
		}
	}
	out := hits[:0]
	for _, h := range hits {
		if h.DenseRank > 0 || h.SparseRank > 0 {
			if h.DenseRank == 0 {
				h.Dense = 0
			}
			if h.SparseRank == 0 {
				h.Sparse = 0
			}
			h.Doc.Vector, h.Doc.Sparse = nil, SparseVector{}
			out = append(out, h)
		}
	}
	SortHybrid(out, q.DenseWeight)
	return out
}

// JoinHybrid is the result of a hybrid search whose two sides were
// searched apart under q.Filter: dense, a Search's best q.PerSide by
// cosine, and sparse, the best q.PerSide by sparse dot product of the
// documents sharing a term with the query, each hit carrying its side's
// score. A document's rank on a side is its place there (ties by ID); a
// side that did not return it scores 0. The union, without vectors, is
// ordered by FuseHybrid. An index whose sides report their own scores
// (Milvus' searches do) needs no vector to answer HybridSearch.
func JoinHybrid(dense, sparse []VectorHit, q HybridQuery) []HybridHit {
	dense, sparse = slices.Clone(dense), slices.DeleteFunc(slices.Clone(sparse), func(h VectorHit) bool { return h.Score <= 0 })
	SortHits(dense)
	SortHits(sparse)
	byID := map[string]int{}
	out := []HybridHit{}
	at := func(d VectorDoc) *HybridHit {
		i, ok := byID[d.ID]
		if !ok {
			i = len(out)
			byID[d.ID] = i
			d.Vector, d.Sparse = nil, SparseVector{}
			out = append(out, HybridHit{Doc: d})
		}
		return &out[i]
	}
	for i, h := range dense[:min(len(dense), q.PerSide)] {
		x := at(h.Doc)
		x.Dense, x.DenseRank = h.Score, i+1
	}
	for i, h := range sparse[:min(len(sparse), q.PerSide)] {
		x := at(h.Doc)
		x.Sparse, x.SparseRank = h.Score, i+1
	}
	SortHybrid(out, q.DenseWeight)
	return out
}

// FuseHybrid is the fused score a hybrid index orders its union by,
// Milvus's weighted reranker's: each side's score squashed into [0,1]
// (cosine as (1+s)/2, a sparse inner product as ½ + arctan(s)/π) and
// weighted by denseWeight and 1−denseWeight. A side that did not return
// the hit counts zero.
func FuseHybrid(h HybridHit, denseWeight float64) float64 {
	s := 0.0
	if h.DenseRank > 0 {
		s += denseWeight * (1 + h.Dense) / 2
	}
	if h.SparseRank > 0 {
		s += (1 - denseWeight) * (0.5 + math.Atan(h.Sparse)/math.Pi)
	}
	return s
}

// SortHybrid orders hits by FuseHybrid, best first, ties by ID.
func SortHybrid(hits []HybridHit, denseWeight float64) {
	slices.SortFunc(hits, func(a, b HybridHit) int {
		if c := cmp.Compare(FuseHybrid(b, denseWeight), FuseHybrid(a, denseWeight)); c != 0 {
			return c
		}
		return cmp.Compare(a.Doc.ID, b.Doc.ID)
	})
}

var _ HybridSearcher = (*MemIndex)(nil)

// HybridSearch implements HybridSearcher, exactly.
func (x *MemIndex) HybridSearch(ctx context.Context, c Collection, q HybridQuery) ([]HybridHit, error) {
	const op = "memindex: hybrid search"
	if err := ValidateCollection(op, c); err != nil {
		return nil, err
	}
	if err := ValidateHybridQuery(op, x.dim, q); err != nil {
		return nil, err
	}
	x.mu.RLock()
	var docs []VectorDoc
	for _, d := range x.docs[c] {
		if q.Filter.Match(d) {
			docs = append(docs, d)
		}
	}
	x.mu.RUnlock()
	return ExactHybrid(docs, q), nil
}

// ChunkDocs splits docs into consecutive runs, each of at least one
// document, of at most maxDocs documents (0: any number) whose sizes add up
// to at most maxBytes: the batches an index writes.
func ChunkDocs(docs []VectorDoc, maxBytes, maxDocs int, size func(VectorDoc) int) [][]VectorDoc {
	var out [][]VectorDoc
	start, total := 0, 0
	for i, d := range docs {
		n := size(d)
		if i > start && (i-start == maxDocs || total+n > maxBytes) {
			out = append(out, docs[start:i])
			start, total = i, 0
		}
		total += n
	}
	if start < len(docs) {
		out = append(out, docs[start:])
	}
	return out
}
