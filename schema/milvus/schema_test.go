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
