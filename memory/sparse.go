package memory

import (
	"cmp"
	"math"
	"slices"
)

// MaxSparseIndex is the largest index a sparse vector may hold: Milvus
// refuses 2^32-1 ("invalid index in sparse float vector: must be less than
// 2^32-1"), so every HybridSearcher refuses it too.
const MaxSparseIndex = math.MaxUint32 - 1

// SparseVector is a sparse vector: strictly increasing indices and their
// weights. Hindsight's are keyword vectors (see package bm25): an
// index is a term's hash, a weight its BM25 weight in a document or its
// IDF in a query.
type SparseVector struct {
	Indices []uint32  `json:"indices"`
	Values  []float32 `json:"values"`
}

// Len is the number of non-zero entries.
func (v SparseVector) Len() int { return len(v.Indices) }

// IsZero reports whether v has no entries.
func (v SparseVector) IsZero() bool { return len(v.Indices) == 0 }

// Dot is the inner product of two sparse vectors.
func (v SparseVector) Dot(w SparseVector) float64 {
	s, i, j := 0.0, 0, 0
	for i < len(v.Indices) && j < len(w.Indices) {
		switch a, b := v.Indices[i], w.Indices[j]; {
		case a == b:
			s += float64(v.Values[i]) * float64(w.Values[j])
			i++
			j++
		case a < b:
			i++
		default:
			j++
		}
	}
	return s
}

// Validate checks that v's indices strictly increase up to
// MaxSparseIndex, that it has one value per index and that every value is
// a finite non-negative number, the shape every HybridSearcher accepts.
func (v SparseVector) Validate(op, what string) error {
	if len(v.Indices) != len(v.Values) {
		return Invalidf(op, "%s has %d sparse indices and %d values; give one value per index", what, len(v.Indices), len(v.Values))
	}
	for i, x := range v.Values {
		if i > 0 && v.Indices[i] <= v.Indices[i-1] {
			return Invalidf(op, "%s has sparse indices out of order at position %d; sort them and drop duplicates", what, i)
		}
		if v.Indices[i] > MaxSparseIndex {
			return Invalidf(op, "%s has sparse index %d; indices must be at most %d", what, v.Indices[i], uint32(MaxSparseIndex))
		}
		if !(x >= 0) || math.IsInf(float64(x), 1) {
			return Invalidf(op, "%s has sparse weight %v at index %d; weights must be finite non-negative numbers", what, x, v.Indices[i])
		}
	}
	return nil
}

// NewSparseVector builds a sparse vector from index → weight, dropping
// zero weights.
func NewSparseVector(weights map[uint32]float32) SparseVector {
	v := SparseVector{Indices: make([]uint32, 0, len(weights)), Values: make([]float32, 0, len(weights))}
	for i, w := range weights {
		if w != 0 {
			v.Indices = append(v.Indices, i)
		}
	}
	slices.SortFunc(v.Indices, cmp.Compare[uint32])
	for _, i := range v.Indices {
		v.Values = append(v.Values, weights[i])
	}
	return v
}

// Clone returns a copy of v that shares no memory with it.
func (v SparseVector) Clone() SparseVector {
	if v.IsZero() {
		return SparseVector{}
	}
	return SparseVector{Indices: slices.Clone(v.Indices), Values: slices.Clone(v.Values)}
}
