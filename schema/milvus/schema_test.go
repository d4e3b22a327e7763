package milvus

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hindsight-memory/hindsight/memory"
)

func TestSpec(t *testing.T) {
	o := Options{Dim: 384}.WithDefaults()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	m := Spec(memory.CollectionMemories, o)
	e := Spec(memory.CollectionEpisodes, o)
	if m.Name != "hindsight_memories" || e.Name != "hindsight_episodes" {
		t.Fatalf("names = %s, %s", m.Name, e.Name)
	}
	var pk, part, vec []string
	for _, f := range m.Fields {
		if f.PrimaryKey {
			pk = append(pk, f.Name)
		}
		if f.PartitionKey {
			part = append(part, f.Name)
		}
		if f.Type == FloatVector {
			vec = append(vec, f.Name)
			if f.Dim != 384 {
				t.Fatalf("vector dim = %d", f.Dim)
			}
		}
	}
	if !slices.Equal(pk, []string{FieldPK}) || !slices.Equal(part, []string{FieldTenant}) || !slices.Equal(vec, []string{FieldVector}) {
		t.Fatalf("pk %v, partition key %v, vectors %v", pk, part, vec)
	}
	if m.Index.Type != "HNSW" || m.Index.Metric != "COSINE" || m.Index.Params["M"] != "16" || m.Index.Params["efConstruction"] != "200" {
		t.Fatalf("index = %+v", m.Index)
	}
	if PrimaryKey("acme", "m/1") != "acme/m/1" {
		t.Fatal("primary key")
	}
}

func TestOptions(t *testing.T) {
	o := Options{Dim: 8, IndexType: "ivf_flat", Metric: "ip", IndexParams: map[string]string{"nlist": "64"}}.WithDefaults()
	if err := o.Validate(); err != nil || o.IndexType != "IVF_FLAT" || o.Metric != "IP" || o.IndexParams["nlist"] != "64" {
		t.Fatalf("options = %+v, %v", o, err)
	}
	bad := []struct {
		o    Options
		want string
	}{
		{Options{Dim: 0}, "dimension 0"},
		{Options{Dim: 8, Prefix: "1bad-name"}, "collection prefix"},
		{Options{Dim: 8, Metric: "L2"}, "metric \"L2\""},
		{Options{Dim: 8, IndexType: "SCANN_X"}, "index type"},
	}
	for _, c := range bad {
		err := c.o.WithDefaults().Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%+v) = %v, want it to mention %q", c.o, err, c.want)
		}
	}
}

func TestCheck(t *testing.T) {
	spec := Spec(memory.CollectionMemories, Options{Dim: 8}.WithDefaults())
	if err := spec.Check(spec.Fields); err != nil {
		t.Fatalf("spec against itself: %v", err)
	}

	other := Spec(memory.CollectionMemories, Options{Dim: 16}.WithDefaults())
	var de *DimensionError
	err := spec.Check(other.Fields)
	if !errors.As(err, &de) || de.Stored != 16 || de.Want != 8 || !strings.Contains(err.Error(), "reindex") {
		t.Fatalf("dimension mismatch = %v", err)
	}

	missing := slices.DeleteFunc(slices.Clone(spec.Fields), func(f Field) bool { return f.Name == FieldEntities })
	missing = append(missing, Field{Name: "extra", Type: Int64})
	err = spec.Check(missing)
	if err == nil || errors.As(err, &de) || !strings.Contains(err.Error(), "field entities is missing") || !strings.Contains(err.Error(), "field extra is not part") {
		t.Fatalf("missing field = %v", err)
	}

	short := slices.Clone(spec.Fields)
	for i := range short {
		if short[i].Name == FieldTaskType {
			short[i].MaxLength = 10
		}
	}
	if err := spec.Check(short); err == nil || !strings.Contains(err.Error(), "task_type holds values of at most 10 bytes") {
		t.Fatalf("short field = %v", err)
	}
}

func TestSparseField(t *testing.T) {
	o := Options{Dim: 8}.WithDefaults()
	m, e := Spec(memory.CollectionMemories, o), Spec(memory.CollectionEpisodes, o)
	var sparse []Field
	for _, f := range m.Fields {
		if f.Type == SparseFloatVector {
			sparse = append(sparse, f)
		}
	}
	if len(sparse) != 1 || sparse[0].Name != FieldSparse || sparse[0].Dim != 0 || sparse[0].PrimaryKey || sparse[0].PartitionKey {
		t.Fatalf("memories' sparse fields = %+v", sparse)
	}
	if m.Sparse == nil || m.Sparse.Field != FieldSparse || m.Sparse.Type != "SPARSE_INVERTED_INDEX" || m.Sparse.Metric != "IP" || m.Sparse.Params["drop_ratio_build"] != "0" {
		t.Fatalf("memories' sparse index = %+v", m.Sparse)
	}
	if ix := m.Indexes(); len(ix) != 2 || ix[0].Field != FieldVector || ix[1].Field != FieldSparse {
		t.Fatalf("memories' indexes = %+v", ix)
	}
	for _, f := range e.Fields {
		if f.Type == SparseFloatVector || f.Name == FieldSparse {
			t.Fatalf("episodes have a sparse field: %+v", f)
		}
	}
	if e.Sparse != nil || len(e.Indexes()) != 1 {
		t.Fatalf("episodes' indexes = %+v", e.Indexes())
	}
	if EmptySparseIndex != memory.MaxSparseIndex {
		t.Fatalf("EmptySparseIndex = %d, want the largest index Milvus allows", uint32(EmptySparseIndex))
	}

	// A memories collection created before the sparse field is refused,
	// saying to rebuild the generation; with another difference as well,
	// the general error names both.
	old := slices.DeleteFunc(slices.Clone(m.Fields), func(f Field) bool { return f.Name == FieldSparse })
	var se *SparseFieldError
	err := m.Check(old)
	if !errors.As(err, &se) || se.Collection != m.Name || !strings.Contains(err.Error(), "reindex") || !strings.Contains(err.Error(), "rebuild the index generation") {
		t.Fatalf("a memories collection without the sparse field = %v", err)
	}
	oldOtherDim := slices.DeleteFunc(slices.Clone(Spec(memory.CollectionMemories, Options{Dim: 16}.WithDefaults()).Fields), func(f Field) bool { return f.Name == FieldSparse })
	if err := m.Check(oldOtherDim); !errors.As(err, &se) {
		t.Fatalf("without the sparse field and of another dimension = %v, want the sparse field error (either way, reindex)", err)
	}
	broken := append(slices.Clone(old), Field{Name: "extra", Type: Int64})
	if err := m.Check(broken); errors.As(err, &se) || err == nil || !strings.Contains(err.Error(), "field extra is not part") {
		t.Fatalf("without the sparse field and with an extra one = %v", err)
	}
	wrong := slices.Clone(m.Fields)
	for i := range wrong {
		if wrong[i].Name == FieldSparse {
			wrong[i].Type = FloatVector
		}
	}
	if err := m.Check(wrong); err == nil || errors.As(err, &se) || !strings.Contains(err.Error(), "field sparse has type FloatVector, want SparseFloatVector") {
		t.Fatalf("a sparse field of another type = %v", err)
	}
	// Episodes know nothing of it: a sparse field there is not part of the spec.
	if err := e.Check(append(slices.Clone(e.Fields), Field{Name: FieldSparse, Type: SparseFloatVector})); err == nil || !strings.Contains(err.Error(), "field sparse is not part") {
		t.Fatalf("episodes with a sparse field = %v", err)
	}
}
