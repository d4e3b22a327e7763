package milvus

import (
	"fmt"
	"slices"

	"github.com/milvus-io/milvus-sdk-go/v2/entity"

	"github.com/hindsight-memory/hindsight/memory"
	schema "github.com/hindsight-memory/hindsight/schema/milvus"
)

// columns lays documents out as the column data Milvus takes; with sparse
// set (the memories collection) their sparse vectors too.
func columns(dim int, sparse bool, docs []memory.VectorDoc) []entity.Column {
	n := len(docs)
	var (
		pk, id, tenant, kind, task, status = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		scope                              = make([]string, n)
		vectors                            = make([][]float32, n)
		confidence, decay                  = make([]float64, n), make([]float64, n)
		created, updated, recalls          = make([]int64, n), make([]int64, n), make([]int64, n)
		pinned                             = make([]bool, n)
		entities                           = make([][][]byte, n)
	)
	for i, d := range docs {
		pk[i], id[i], tenant[i] = schema.PrimaryKey(d.Tenant, d.ID), d.ID, d.Tenant
		scope[i], kind[i], task[i], status[i] = string(d.Scope.Norm()), string(d.Kind), d.TaskType, d.Status
		vectors[i] = d.Vector
		confidence[i], decay[i] = d.Confidence, d.Decay
		created[i], updated[i], recalls[i] = toMilli(d.CreatedAt), toMilli(d.UpdatedAt), int64(d.RecallCount)
		pinned[i] = d.Pinned
		entities[i] = make([][]byte, len(d.Entities))
		for j, e := range d.Entities {
			entities[i][j] = []byte(e)
		}
	}
	cols := []entity.Column{
		entity.NewColumnVarChar(schema.FieldPK, pk),
		entity.NewColumnVarChar(schema.FieldID, id),
		entity.NewColumnVarChar(schema.FieldTenant, tenant),
		entity.NewColumnFloatVector(schema.FieldVector, dim, vectors),
		entity.NewColumnVarChar(schema.FieldScope, scope),
		entity.NewColumnVarChar(schema.FieldKind, kind),
		entity.NewColumnVarChar(schema.FieldTaskType, task),
		entity.NewColumnVarChar(schema.FieldStatus, status),
		entity.NewColumnDouble(schema.FieldConfidence, confidence),
		entity.NewColumnDouble(schema.FieldDecay, decay),
		entity.NewColumnInt64(schema.FieldCreatedAt, created),
		entity.NewColumnInt64(schema.FieldUpdatedAt, updated),
		entity.NewColumnInt64(schema.FieldRecallCount, recalls),
		entity.NewColumnBool(schema.FieldPinned, pinned),
		entity.NewColumnVarCharArray(schema.FieldEntities, entities),
	}
	if sparse {
		rows := make([]entity.SparseEmbedding, n)
		for i, d := range docs {
			rows[i] = sparseRow(d.Sparse)
		}
		cols = append(cols, entity.NewColumnSparseVectors(schema.FieldSparse, rows))
	}
	return cols
}

// emptySparse is the row a document without keywords stores: Milvus before
// 2.4.12 refuses empty sparse rows (see schema.EmptySparseIndex).
var emptySparse = memory.SparseVector{Indices: []uint32{schema.EmptySparseIndex}, Values: []float32{0}}

// sparseRow is the SDK's row of a valid sparse vector. The SDK sorts the
// slices it is given in place, so it gets copies.
func sparseRow(v memory.SparseVector) entity.SparseEmbedding {
	if v.IsZero() {
		v = emptySparse
	}
	row, _ := entity.NewSliceSparseEmbedding(slices.Clone(v.Indices), slices.Clone(v.Values)) // lengths match: the vector is valid
	return row
}

// fromSparseRow reads a stored sparse row back, the empty row's stand-in
// as empty.
func fromSparseRow(row entity.SparseEmbedding) memory.SparseVector {
	n := row.Len()
	if n == 0 {
		return memory.SparseVector{}
	}
	v := memory.SparseVector{Indices: make([]uint32, n), Values: make([]float32, n)}
	for i := range n {
		v.Indices[i], v.Values[i], _ = row.Get(i)
	}
	if n == 1 && v.Indices[0] == schema.EmptySparseIndex && v.Values[0] == 0 {
		return memory.SparseVector{}
	}
	return v
}

// docsFrom reads n documents back from result columns. Fields that were not
// asked for stay zero.
func docsFrom(cols []entity.Column, n int) ([]memory.VectorDoc, error) {
	docs := make([]memory.VectorDoc, n)
	for _, col := range cols {
		if col.Len() != n {
			return nil, fmt.Errorf("column %s has %d values, want %d", col.Name(), col.Len(), n)
		}
		var err error
		switch c := col.(type) {
		case *entity.ColumnVarChar:
			err = setEach(docs, col.Name(), c.Data(), map[string]func(*memory.VectorDoc, string){
				schema.FieldPK:       func(*memory.VectorDoc, string) {},
				schema.FieldID:       func(d *memory.VectorDoc, v string) { d.ID = v },
				schema.FieldTenant:   func(d *memory.VectorDoc, v string) { d.Tenant = v },
				schema.FieldScope:    func(d *memory.VectorDoc, v string) { d.Scope = memory.Scope(v) },
				schema.FieldKind:     func(d *memory.VectorDoc, v string) { d.Kind = memory.Kind(v) },
				schema.FieldTaskType: func(d *memory.VectorDoc, v string) { d.TaskType = v },
				schema.FieldStatus:   func(d *memory.VectorDoc, v string) { d.Status = v },
			})
		case *entity.ColumnDouble:
			err = setEach(docs, col.Name(), c.Data(), map[string]func(*memory.VectorDoc, float64){
				schema.FieldConfidence: func(d *memory.VectorDoc, v float64) { d.Confidence = v },
				schema.FieldDecay:      func(d *memory.VectorDoc, v float64) { d.Decay = v },
			})
		case *entity.ColumnInt64:
			err = setEach(docs, col.Name(), c.Data(), map[string]func(*memory.VectorDoc, int64){
				schema.FieldCreatedAt:   func(d *memory.VectorDoc, v int64) { d.CreatedAt = fromMilli(v) },
				schema.FieldUpdatedAt:   func(d *memory.VectorDoc, v int64) { d.UpdatedAt = fromMilli(v) },
				schema.FieldRecallCount: func(d *memory.VectorDoc, v int64) { d.RecallCount = int(v) },
			})
		case *entity.ColumnBool:
			err = setEach(docs, col.Name(), c.Data(), map[string]func(*memory.VectorDoc, bool){
				schema.FieldPinned: func(d *memory.VectorDoc, v bool) { d.Pinned = v },
			})
		case *entity.ColumnFloatVector:
			err = setEach(docs, col.Name(), c.Data(), map[string]func(*memory.VectorDoc, []float32){
				schema.FieldVector: func(d *memory.VectorDoc, v []float32) { d.Vector = v },
			})
		case *entity.ColumnSparseFloatVector:
			err = setEach(docs, col.Name(), c.Data(), map[string]func(*memory.VectorDoc, entity.SparseEmbedding){
				schema.FieldSparse: func(d *memory.VectorDoc, v entity.SparseEmbedding) { d.Sparse = fromSparseRow(v) },
			})
		case *entity.ColumnVarCharArray:
			err = setEach(docs, col.Name(), c.Data(), map[string]func(*memory.VectorDoc, [][]byte){
				schema.FieldEntities: func(d *memory.VectorDoc, v [][]byte) {
					if len(v) == 0 {
						return // nil, as stored by a document without entities
					}
					d.Entities = make([]string, len(v))
					for i, e := range v {
						d.Entities[i] = string(e)
					}
				},
			})
		default:
			err = fmt.Errorf("column %s has unexpected type %T", col.Name(), col)
		}
		if err != nil {
			return nil, err
		}
	}
	return docs, nil
}

// setEach applies the setter for column name to every document.
func setEach[V any](docs []memory.VectorDoc, name string, values []V, setters map[string]func(*memory.VectorDoc, V)) error {
	set, ok := setters[name]
	if !ok {
		return fmt.Errorf("column %s is not part of the schema", name)
	}
	for i, v := range values {
		set(&docs[i], v)
	}
	return nil
}
