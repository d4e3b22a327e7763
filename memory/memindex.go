package memory

import (
	"cmp"
	"context"
	"slices"
	"sync"
)

// MemIndex is the in-memory reference VectorIndex: exact cosine search over
// every document that passes the filter. It defines the results the other
// indexes are measured against, and keeps nothing across restarts.
type MemIndex struct {
	dim  int
	mu   sync.RWMutex
	docs map[Collection]map[string]VectorDoc // collection → tenant/ID → doc
}

var _ VectorIndex = (*MemIndex)(nil)

// NewMemIndex returns an empty index of vectors of dimension dim.
func NewMemIndex(dim int) *MemIndex {
	return &MemIndex{dim: dim, docs: map[Collection]map[string]VectorDoc{}}
}

func docKey(tenant, id string) string { return tenant + "\x00" + id }

// ValidateCollection checks c is a known collection.
func ValidateCollection(op string, c Collection) error {
	if c != CollectionMemories && c != CollectionEpisodes {
		return Invalidf(op, "collection %q is not one of memories, episodes", c)
	}
	return nil
}

// ValidateVectorDocs checks documents before an upsert into an index of
// dimension dim.
func ValidateVectorDocs(op string, dim int, docs []VectorDoc) error {
	for _, d := range docs {
		if err := ValidateTenant(op, d.Tenant); err != nil {
			return err
		}
		if d.ID == "" {
			return Invalidf(op, "document id is required")
		}
		if len(d.Vector) != dim {
			return Invalidf(op, "document %s has a vector of dimension %d, the index has dimension %d", d.ID, len(d.Vector), dim)
		}
		if err := d.Sparse.Validate(op, "document "+d.ID); err != nil {
			return err
		}
	}
	return nil
}

// Upsert implements VectorIndex.
func (x *MemIndex) Upsert(ctx context.Context, c Collection, docs []VectorDoc) error {
	const op = "memindex: upsert"
	if err := ValidateCollection(op, c); err != nil {
		return err
	}
	if err := ValidateVectorDocs(op, x.dim, docs); err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	m := x.docs[c]
	if m == nil {
		m = map[string]VectorDoc{}
		x.docs[c] = m
	}
	for _, d := range docs {
		d.Vector = slices.Clone(d.Vector)
		d.Entities = slices.Clone(d.Entities)
		d.Sparse = d.Sparse.Clone()
		m[docKey(d.Tenant, d.ID)] = d
	}
	return nil
}

// Search implements VectorIndex.
func (x *MemIndex) Search(ctx context.Context, c Collection, vector []float32, f VectorFilter, k int) ([]VectorHit, error) {
	const op = "memindex: search"
	if err := ValidateCollection(op, c); err != nil {
		return nil, err
	}
	if err := f.Validate(op); err != nil {
		return nil, err
	}
	if len(vector) != x.dim {
		return nil, Invalidf(op, "query vector has dimension %d, the index has dimension %d", len(vector), x.dim)
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	hits := []VectorHit{}
	for _, d := range x.docs[c] {
		if !f.Match(d) {
			continue
		}
		s := Cosine(vector, d.Vector)
		d.Vector, d.Sparse = nil, SparseVector{}
		hits = append(hits, VectorHit{Doc: d, Score: s})
	}
	SortHits(hits)
	if k >= 0 && len(hits) > k {
		hits = hits[:k]
	}
	return hits, nil
}

// SortHits orders hits by score, highest first, then by ID so that ties are
// deterministic.
func SortHits(hits []VectorHit) {
	slices.SortFunc(hits, func(a, b VectorHit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Doc.ID, b.Doc.ID)
	})
}

// Get implements VectorIndex.
func (x *MemIndex) Get(ctx context.Context, c Collection, tenant string, ids []string) ([]VectorDoc, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := []VectorDoc{}
	for _, id := range ids {
		if d, ok := x.docs[c][docKey(tenant, id)]; ok {
			d.Vector = slices.Clone(d.Vector)
			out = append(out, d)
		}
	}
	return out, nil
}

// Delete implements VectorIndex.
func (x *MemIndex) Delete(ctx context.Context, c Collection, tenant string, ids []string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, id := range ids {
		delete(x.docs[c], docKey(tenant, id))
	}
	return nil
}

// List implements VectorIndex.
func (x *MemIndex) List(ctx context.Context, c Collection, f VectorFilter, afterID string, limit int) ([]VectorDoc, error) {
	if err := f.Validate("memindex: list"); err != nil {
		return nil, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := []VectorDoc{}
	for _, d := range x.docs[c] {
		if f.Match(d) && d.ID > afterID {
			d.Vector, d.Sparse = nil, SparseVector{}
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b VectorDoc) int { return cmp.Compare(a.ID, b.ID) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Close implements VectorIndex.
func (x *MemIndex) Close() error { return nil }
