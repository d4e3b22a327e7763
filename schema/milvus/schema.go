package milvus

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strings"

	"github.com/hindsight-memory/hindsight/memory"
)

// DataType is a Milvus field type, spelled as Milvus spells it.
type DataType string

// The field types the collections use.
const (
	VarChar     DataType = "VarChar"
	Int64       DataType = "Int64"
	Double      DataType = "Double"
	Bool        DataType = "Bool"
	FloatVector DataType = "FloatVector"
	Array       DataType = "Array"
	// SparseFloatVector needs Milvus 2.4 or newer.
	SparseFloatVector DataType = "SparseFloatVector"
)

// Field names. Times are Unix milliseconds (the precision ClickHouse keeps
// too); confidence and decay are doubles so that a filter compares exactly
// the float64 the domain holds.
const (
	FieldPK          = "pk"     // PrimaryKey(tenant, id)
	FieldID          = "doc_id" // the domain ID
	FieldTenant      = "tenant" // the partition key
	FieldVector      = "vector"
	FieldScope       = "scope" // memory.Scope: shared, user:ID, agent:ID
	FieldKind        = "kind"
	FieldTaskType    = "task_type"
	FieldStatus      = "status"
	FieldConfidence  = "confidence"
	FieldDecay       = "decay"
	FieldCreatedAt   = "created_at"
	FieldUpdatedAt   = "updated_at"
	FieldRecallCount = "recall_count"
	FieldPinned      = "pinned"
	FieldEntities    = "entities"
	// FieldSparse is a memory's keyword vector (memory.VectorDoc.Sparse),
	// in the memories collection only.
	FieldSparse = "sparse"
)

// The sparse field's index: an inverted index scored by inner product,
// built and searched without dropping small weights, so that its scores
// are the exact dot products.
const (
	SparseIndexType = "SPARSE_INVERTED_INDEX"
	SparseMetric    = "IP"
)

// EmptySparseIndex is where a document without keywords keeps its sparse
// row: Milvus before 2.4.12 refuses empty sparse rows, so an empty vector
// is stored as the single entry EmptySparseIndex → 0 and read back as
// empty. A zero weight adds nothing to any dot product, so the row scores
// 0 against every query, as an empty one would.
const EmptySparseIndex = memory.MaxSparseIndex

// Limits of the VarChar and Array fields, in bytes and elements. Milvus
// rejects longer values, so the adapter checks them first and says which
// document and field is too long.
const (
	MaxTenantLength   = 64 // memory.ValidateTenant allows no more
	MaxIDLength       = 256
	MaxPKLength       = MaxTenantLength + 1 + MaxIDLength
	MaxScopeLength    = 6 + MaxIDLength // "agent:" and the owner
	MaxKindLength     = 32
	MaxTaskTypeLength = 256
	MaxStatusLength   = 32
	MaxEntities       = 64
	MaxEntityLength   = 256
)

// Defaults.
const (
	DefaultPrefix    = "hindsight"
	DefaultIndexType = "HNSW"
	DefaultMetric    = "COSINE"
)

// PrimaryKey is the primary key of a document: tenant, '/', ID. Tenants
// cannot contain '/' (memory.ValidateTenant), so the key splits back
// unambiguously, and within one tenant keys sort exactly as IDs do, which is
// what paging in ID order relies on.
func PrimaryKey(tenant, id string) string { return tenant + "/" + id }

// Field is one field of a collection.
type Field struct {
	Name         string
	Type         DataType
	ElementType  DataType // Array only
	MaxLength    int      // VarChar, and the VarChar elements of an Array
	MaxCapacity  int      // Array
	Dim          int      // FloatVector; SparseFloatVector has none
	PrimaryKey   bool
	PartitionKey bool
	Description  string
}

// Index is the index of one vector field.
type Index struct {
	Field  string
	Type   string // HNSW, IVF_FLAT, FLAT, AUTOINDEX, DISKANN; SPARSE_INVERTED_INDEX
	Metric string // COSINE or IP
	Params map[string]string
}

// Collection is one collection: its name, fields and vector indexes.
type Collection struct {
	Name        string
	Description string
	Fields      []Field
	// Index is the dense vector's index.
	Index Index
	// Sparse is the sparse field's index; nil for a collection without
	// one (episodes).
	Sparse *Index
}

// Indexes are the collection's vector indexes, dense first.
func (c Collection) Indexes() []Index {
	if c.Sparse == nil {
		return []Index{c.Index}
	}
	return []Index{c.Index, *c.Sparse}
}

// Options configure the collections.
type Options struct {
	// Prefix names the collections: "<prefix>_memories", "<prefix>_episodes".
	// Default "hindsight".
	Prefix string
	// Dim is the dimension of the embedder's vectors. Required.
	Dim int
	// IndexType defaults to HNSW.
	IndexType string
	// Metric defaults to COSINE. IP equals cosine only for unit vectors,
	// which memory.Embedder promises. L2 is refused: scores must be cosine
	// similarities.
	Metric string
	// IndexParams override the defaults of the index type (HNSW: M=16,
	// efConstruction=200; IVF_FLAT: nlist=1024).
	IndexParams map[string]string
}

var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// indexTypes are the index types the adapter knows how to search, with
// their default build parameters.
var indexTypes = map[string]map[string]string{
	"HNSW":      {"M": "16", "efConstruction": "200"},
	"IVF_FLAT":  {"nlist": "1024"},
	"FLAT":      {},
	"AUTOINDEX": {},
	"DISKANN":   {},
}

// WithDefaults returns o with its zero fields set to the defaults.
func (o Options) WithDefaults() Options {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.IndexType == "" {
		o.IndexType = DefaultIndexType
	}
	o.IndexType = strings.ToUpper(o.IndexType)
	if o.Metric == "" {
		o.Metric = DefaultMetric
	}
	o.Metric = strings.ToUpper(o.Metric)
	params := maps.Clone(indexTypes[o.IndexType])
	if params == nil {
		params = map[string]string{}
	}
	maps.Copy(params, o.IndexParams)
	o.IndexParams = params
	return o
}

// Validate checks o after WithDefaults.
func (o Options) Validate() error {
	var errs []error
	if !nameRE.MatchString(o.Prefix) || len(o.Prefix) > 200 {
		errs = append(errs, fmt.Errorf("collection prefix %q is not valid: use letters, digits and '_', starting with a letter or '_'", o.Prefix))
	}
	if o.Dim < 1 || o.Dim > 32768 {
		errs = append(errs, fmt.Errorf("dimension %d is not valid: set it to the embedder's dimension (1-32768)", o.Dim))
	}
	if _, ok := indexTypes[o.IndexType]; !ok {
		errs = append(errs, fmt.Errorf("index type %q is not supported: use HNSW, IVF_FLAT, FLAT, AUTOINDEX or DISKANN", o.IndexType))
	}
	if o.Metric != "COSINE" && o.Metric != "IP" {
		errs = append(errs, fmt.Errorf("metric %q is not supported: use COSINE, or IP for unit vectors (scores must be cosine similarities)", o.Metric))
	}
	return errors.Join(errs...)
}

// Name returns the Milvus collection name of c.
func (o Options) Name(c memory.Collection) string { return o.Prefix + "_" + string(c) }

// Spec returns the specification of collection c. o must be valid.
func Spec(c memory.Collection, o Options) Collection {
	desc := "Hindsight semantic memories: one row per current memory version"
	if c == memory.CollectionEpisodes {
		desc = "Hindsight episodes: one row per distilled session"
	}
	spec := Collection{
		Name:        o.Name(c),
		Description: desc,
		Fields: []Field{
			{Name: FieldPK, Type: VarChar, MaxLength: MaxPKLength, PrimaryKey: true, Description: "tenant/id"},
			{Name: FieldID, Type: VarChar, MaxLength: MaxIDLength},
			{Name: FieldTenant, Type: VarChar, MaxLength: MaxTenantLength, PartitionKey: true},
			{Name: FieldVector, Type: FloatVector, Dim: o.Dim},
			{Name: FieldScope, Type: VarChar, MaxLength: MaxScopeLength, Description: "shared, user:ID or agent:ID; shared for episodes"},
			{Name: FieldKind, Type: VarChar, MaxLength: MaxKindLength, Description: "empty for episodes"},
			{Name: FieldTaskType, Type: VarChar, MaxLength: MaxTaskTypeLength},
			{Name: FieldStatus, Type: VarChar, MaxLength: MaxStatusLength, Description: "live, superseded, cold, archived (memories); live, cold, summary (episodes)"},
			{Name: FieldConfidence, Type: Double},
			{Name: FieldDecay, Type: Double},
			{Name: FieldCreatedAt, Type: Int64, Description: "unix milliseconds"},
			{Name: FieldUpdatedAt, Type: Int64, Description: "unix milliseconds"},
			{Name: FieldRecallCount, Type: Int64},
			{Name: FieldPinned, Type: Bool},
			{Name: FieldEntities, Type: Array, ElementType: VarChar, MaxCapacity: MaxEntities, MaxLength: MaxEntityLength},
		},
		Index: Index{Field: FieldVector, Type: o.IndexType, Metric: o.Metric, Params: maps.Clone(o.IndexParams)},
	}
	if c == memory.CollectionMemories {
		spec.Fields = append(spec.Fields, Field{Name: FieldSparse, Type: SparseFloatVector,
			Description: "keyword (BM25) weights by term hash; a document without keywords holds EmptySparseIndex → 0"})
		spec.Sparse = &Index{Field: FieldSparse, Type: SparseIndexType, Metric: SparseMetric, Params: map[string]string{"drop_ratio_build": "0"}}
	}
	return spec
}

// DimensionError reports a collection whose stored vectors have another
// dimension than the embedder's: the collection must be rebuilt.
type DimensionError struct {
	Collection string
	Stored     int
	Want       int
}

func (e *DimensionError) Error() string {
	return fmt.Sprintf("collection %s stores vectors of dimension %d but the embedder produces dimension %d: reindex into a new collection (hindsight reindex, or another collection prefix) before using this embedder",
		e.Collection, e.Stored, e.Want)
}

// SparseFieldError reports a memories collection created before keyword
// search, without the sparse field: Milvus cannot add a vector field to a
// collection, so the index generation must be rebuilt.
type SparseFieldError struct {
	Collection string
}

func (e *SparseFieldError) Error() string {
	return fmt.Sprintf("collection %s has no %s field: it was created before keyword (sparse) search, and Milvus cannot add a vector field to a collection; rebuild the index generation into a new collection (hindsight reindex, or another collection prefix) before using this version",
		e.Collection, FieldSparse)
}

// Check compares the fields a server reports for the collection (got) with
// the spec. It returns a *SparseFieldError when the sparse field is
// missing and a *DimensionError when the vector dimension differs, both
// when nothing else does, and otherwise an error naming every difference,
// which means the collection was not created by Hindsight.
func (c Collection) Check(got []Field) error {
	byName := map[string]Field{}
	for _, f := range got {
		byName[f.Name] = f
	}
	var errs []error
	var dimErr, sparseErr error
	for _, want := range c.Fields {
		f, ok := byName[want.Name]
		if !ok && want.Type == SparseFloatVector {
			sparseErr = &SparseFieldError{Collection: c.Name}
			continue
		}
		if !ok {
			errs = append(errs, fmt.Errorf("field %s is missing", want.Name))
			continue
		}
		delete(byName, want.Name)
		switch {
		case f.Type != want.Type:
			errs = append(errs, fmt.Errorf("field %s has type %s, want %s", want.Name, f.Type, want.Type))
		case want.Type == Array && f.ElementType != want.ElementType:
			errs = append(errs, fmt.Errorf("field %s has elements of type %s, want %s", want.Name, f.ElementType, want.ElementType))
		case f.PrimaryKey != want.PrimaryKey:
			errs = append(errs, fmt.Errorf("field %s: primary key is %t, want %t", want.Name, f.PrimaryKey, want.PrimaryKey))
		case f.PartitionKey != want.PartitionKey:
			errs = append(errs, fmt.Errorf("field %s: partition key is %t, want %t", want.Name, f.PartitionKey, want.PartitionKey))
		case want.Type == FloatVector && f.Dim != want.Dim:
			dimErr = &DimensionError{Collection: c.Name, Stored: f.Dim, Want: want.Dim}
		case f.MaxLength < want.MaxLength:
			errs = append(errs, fmt.Errorf("field %s holds values of at most %d bytes, want %d", want.Name, f.MaxLength, want.MaxLength))
		case f.MaxCapacity < want.MaxCapacity:
			errs = append(errs, fmt.Errorf("field %s holds at most %d elements, want %d", want.Name, f.MaxCapacity, want.MaxCapacity))
		}
	}
	for name := range byName {
		errs = append(errs, fmt.Errorf("field %s is not part of the spec", name))
	}
	if len(errs) > 0 {
		return fmt.Errorf("collection %s does not match the spec of this version of hindsight (%w); drop it and reindex, or use another collection prefix", c.Name, errors.Join(errs...))
	}
	if sparseErr != nil {
		return sparseErr
	}
	return dimErr
}
