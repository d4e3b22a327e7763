package milvusfake

import (
	"cmp"
	"context"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// maxWindow is Milvus' limit on topk and on a query's offset+limit.
const maxWindow = 16384

// Upsert implements milvuspb.MilvusServiceServer: it validates every row
// against the schema, as Milvus' proxy does, then replaces rows by primary
// key.
func (s *Server) Upsert(ctx context.Context, req *milvuspb.UpsertRequest) (*milvuspb.MutationResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.collections[req.GetCollectionName()]
	if !ok {
		return &milvuspb.MutationResult{Status: errCollectionNotFound(req.GetCollectionName())}, nil
	}
	if req.GetPartitionName() != "" && c.partitionKey() != nil {
		return &milvuspb.MutationResult{Status: errInvalid("not support manually specifying the partition names if partition key mode is used")}, nil
	}
	rows, st := c.decodeRows(req.GetFieldsData(), int(req.GetNumRows()))
	if st != nil {
		return &milvuspb.MutationResult{Status: st}, nil
	}
	seen := map[any]bool{}
	keys := make([]any, len(rows))
	for i, r := range rows {
		keys[i] = r[c.pk.GetName()]
		if seen[keys[i]] {
			return &milvuspb.MutationResult{Status: errInvalid("duplicate primary keys are not allowed in the same batch")}, nil
		}
		seen[keys[i]] = true
	}
	for i, r := range rows {
		c.rows[keys[i]] = r
	}
	c.filtered = nil
	return &milvuspb.MutationResult{
		Status: success(), IDs: c.ids(keys), SuccIndex: succIndex(len(rows)),
		InsertCnt: int64(len(rows)), UpsertCnt: int64(len(rows)), Timestamp: s.tick(),
	}, nil
}

func succIndex(n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(i)
	}
	return out
}

func (c *collection) partitionKey() *schemapb.FieldSchema {
	for _, f := range c.schema.GetFields() {
		if f.GetIsPartitionKey() {
			return f
		}
	}
	return nil
}

// ids encodes primary keys as Milvus returns them.
func (c *collection) ids(keys []any) *schemapb.IDs {
	if c.pk.GetDataType() == schemapb.DataType_VarChar {
		strs := make([]string, len(keys))
		for i, k := range keys {
			strs[i] = k.(string)
		}
		return &schemapb.IDs{IdField: &schemapb.IDs_StrId{StrId: &schemapb.StringArray{Data: strs}}}
	}
	ints := make([]int64, len(keys))
	for i, k := range keys {
		ints[i] = k.(int64)
	}
	return &schemapb.IDs{IdField: &schemapb.IDs_IntId{IntId: &schemapb.LongArray{Data: ints}}}
}

// decodeRows turns column data into rows, checking it against the schema
// with Milvus' error messages.
func (c *collection) decodeRows(data []*schemapb.FieldData, n int) ([]row, *commonpb.Status) {
	rows := make([]row, n)
	for i := range rows {
		rows[i] = row{}
	}
	given := map[string]bool{}
	for _, fd := range data {
		name := fd.GetFieldName()
		f, ok := c.fields[name]
		if !ok || fd.GetIsDynamic() {
			return nil, errInvalid("Attempt to insert an unexpected field `%s` to collection without enabling dynamic field", name)
		}
		if fd.GetType() != f.GetDataType() {
			return nil, errInvalid("field %s has type %s, but the data has type %s", name, f.GetDataType(), fd.GetType())
		}
		given[name] = true
		values, st := c.decodeColumn(f, fd)
		if st != nil {
			return nil, st
		}
		if len(values) != n {
			return nil, errInvalid("the num_rows (%d) of field (%s) is not equal to passed num_rows (%d)", len(values), name, n)
		}
		for i, v := range values {
			rows[i][name] = v
		}
	}
	for _, f := range c.schema.GetFields() {
		if !given[f.GetName()] && !f.GetAutoID() {
			return nil, errInvalid("fieldSchema(%s) has no corresponding fieldData pass in", f.GetName())
		}
	}
	return rows, nil
}

func typeParam(f *schemapb.FieldSchema, key string) int {
	n, _ := strconv.Atoi(kv(f.GetTypeParams())[key])
	return n
}

func (c *collection) decodeColumn(f *schemapb.FieldSchema, fd *schemapb.FieldData) ([]any, *commonpb.Status) {
	var out []any
	sc := fd.GetScalars()
	checkLen := func(s string, row int) *commonpb.Status {
		if max := typeParam(f, "max_length"); len(s) > max {
			return errInvalid("length of varchar field %s exceeds max length, row number: %d, length: %d, max length: %d", f.GetName(), row, len(s), max)
		}
		return nil
	}
	switch f.GetDataType() {
	case schemapb.DataType_VarChar:
		for i, v := range sc.GetStringData().GetData() {
			if st := checkLen(v, i); st != nil {
				return nil, st
			}
			out = append(out, v)
		}
	case schemapb.DataType_Int64:
		for _, v := range sc.GetLongData().GetData() {
			out = append(out, v)
		}
	case schemapb.DataType_Int32, schemapb.DataType_Int16, schemapb.DataType_Int8:
		for _, v := range sc.GetIntData().GetData() {
			out = append(out, int64(v))
		}
	case schemapb.DataType_Double:
		for _, v := range sc.GetDoubleData().GetData() {
			out = append(out, v)
		}
	case schemapb.DataType_Float:
		for _, v := range sc.GetFloatData().GetData() {
			out = append(out, float64(v))
		}
	case schemapb.DataType_Bool:
		for _, v := range sc.GetBoolData().GetData() {
			out = append(out, v)
		}
	case schemapb.DataType_FloatVector:
		dim := typeParam(f, "dim")
		vf := fd.GetVectors()
		if int(vf.GetDim()) != dim {
			return nil, errInvalid("the dim (%d) of field data(%s) is not equal to schema dim (%d)[expected=%d][actual=%d]", vf.GetDim(), f.GetName(), dim, dim, vf.GetDim())
		}
		flat := vf.GetFloatVector().GetData()
		if len(flat)%dim != 0 {
			return nil, errInvalid("the length (%d) of field data(%s) is not a multiple of dim (%d)", len(flat), f.GetName(), dim)
		}
		for i := 0; i < len(flat); i += dim {
			out = append(out, slices.Clone(flat[i:i+dim]))
		}
	case schemapb.DataType_SparseFloatVector:
		for _, b := range fd.GetVectors().GetSparseFloatVector().GetContents() {
			v, st := parseSparseRow(b)
			if st != nil {
				return nil, st
			}
			out = append(out, v)
		}
	case schemapb.DataType_Array:
		capacity := typeParam(f, "max_capacity")
		for i, elem := range sc.GetArrayData().GetData() {
			var v any
			var n int
			switch f.GetElementType() {
			case schemapb.DataType_VarChar:
				strs := slices.Clone(elem.GetStringData().GetData())
				for _, s := range strs {
					if st := checkLen(s, i); st != nil {
						return nil, st
					}
				}
				v, n = strs, len(strs)
			default:
				ints := slices.Clone(elem.GetLongData().GetData())
				v, n = ints, len(ints)
			}
			if n > capacity {
				return nil, errInvalid("the length (%d) of %dth array exceeds max capacity (%d)", n, i, capacity)
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// encodeColumn turns the values of field f in rows into column data.
func encodeColumn(f *schemapb.FieldSchema, rows []row) *schemapb.FieldData {
	name := f.GetName()
	fd := &schemapb.FieldData{Type: f.GetDataType(), FieldName: name, FieldId: f.GetFieldID()}
	scalars := func(sf *schemapb.ScalarField) { fd.Field = &schemapb.FieldData_Scalars{Scalars: sf} }
	switch f.GetDataType() {
	case schemapb.DataType_VarChar:
		vs := make([]string, len(rows))
		for i, r := range rows {
			vs[i] = r[name].(string)
		}
		scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: vs}}})
	case schemapb.DataType_Int64:
		vs := make([]int64, len(rows))
		for i, r := range rows {
			vs[i] = r[name].(int64)
		}
		scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: vs}}})
	case schemapb.DataType_Int32, schemapb.DataType_Int16, schemapb.DataType_Int8:
		vs := make([]int32, len(rows))
		for i, r := range rows {
			vs[i] = int32(r[name].(int64))
		}
		scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_IntData{IntData: &schemapb.IntArray{Data: vs}}})
	case schemapb.DataType_Double:
		vs := make([]float64, len(rows))
		for i, r := range rows {
			vs[i] = r[name].(float64)
		}
		scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_DoubleData{DoubleData: &schemapb.DoubleArray{Data: vs}}})
	case schemapb.DataType_Float:
		vs := make([]float32, len(rows))
		for i, r := range rows {
			vs[i] = float32(r[name].(float64))
		}
		scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_FloatData{FloatData: &schemapb.FloatArray{Data: vs}}})
	case schemapb.DataType_Bool:
		vs := make([]bool, len(rows))
		for i, r := range rows {
			vs[i] = r[name].(bool)
		}
		scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_BoolData{BoolData: &schemapb.BoolArray{Data: vs}}})
	case schemapb.DataType_FloatVector:
		dim := typeParam(f, "dim")
		flat := make([]float32, 0, len(rows)*dim)
		for _, r := range rows {
			flat = append(flat, r[name].([]float32)...)
		}
		fd.Field = &schemapb.FieldData_Vectors{Vectors: &schemapb.VectorField{Dim: int64(dim), Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: flat}}}}
	case schemapb.DataType_SparseFloatVector:
		// The array's dimension is one past the largest index of any row,
		// as Milvus reports it.
		contents := make([][]byte, len(rows))
		var dim int64
		for i, r := range rows {
			v := r[name].(sparseRow)
			contents[i] = v.bytes()
			if n := len(v.idx); n > 0 {
				dim = max(dim, int64(v.idx[n-1])+1)
			}
		}
		fd.Field = &schemapb.FieldData_Vectors{Vectors: &schemapb.VectorField{Dim: dim, Data: &schemapb.VectorField_SparseFloatVector{SparseFloatVector: &schemapb.SparseFloatArray{Dim: dim, Contents: contents}}}}
	case schemapb.DataType_Array:
		elems := make([]*schemapb.ScalarField, len(rows))
		for i, r := range rows {
			switch v := r[name].(type) {
			case []string:
				elems[i] = &schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: v}}}
			case []int64:
				elems[i] = &schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: v}}}
			}
		}
		scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_ArrayData{ArrayData: &schemapb.ArrayArray{Data: elems, ElementType: f.GetElementType()}}})
	}
	return fd
}

// outputFields resolves requested output fields. The primary key is always
// returned by queries; searches return it as IDs instead.
func (c *collection) outputFields(requested []string, withPK bool) ([]*schemapb.FieldSchema, *commonpb.Status) {
	var out []*schemapb.FieldSchema
	add := func(f *schemapb.FieldSchema) {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if withPK {
		add(c.pk)
	}
	for _, name := range requested {
		if name == "*" {
			for _, f := range c.schema.GetFields() {
				add(f)
			}
			continue
		}
		f, ok := c.fields[name]
		if !ok {
			return nil, errInvalid("field %s not exist", name)
		}
		add(f)
	}
	return out, nil
}

// plan parses a filter the way Milvus' proxy does before a query or search.
func (c *collection) plan(text string) (expr, *commonpb.Status) {
	if text == "" {
		return nil, nil
	}
	e, err := parseExpr(text, c.fields)
	if err != nil {
		return nil, errInvalid("failed to create query plan: %v", err)
	}
	return e, nil
}

// matching returns the rows passing e, ordered by primary key, as Milvus
// orders query results.
func (c *collection) matching(e expr) []row {
	type keyed struct {
		key any
		r   row
	}
	pk := c.pk.GetName()
	var ks []keyed
	for _, r := range c.rows {
		if e == nil || e.match(r) {
			ks = append(ks, keyed{r[pk], r})
		}
	}
	slices.SortFunc(ks, func(a, b keyed) int { return comparePK(a.key, b.key) })
	out := make([]row, len(ks))
	for i, k := range ks {
		out[i] = k.r
	}
	return out
}

// matchingUnordered is matching in no particular order, for a search that
// orders its hits itself. Large collections are filtered in parallel
// chunks.
func (c *collection) matchingUnordered(e expr) []row {
	all := make([]row, 0, len(c.rows))
	for _, r := range c.rows {
		all = append(all, r)
	}
	if e == nil {
		return all
	}
	filter := func(rows []row) []row {
		var out []row
		for _, r := range rows {
			if e.match(r) {
				out = append(out, r)
			}
		}
		return out
	}
	chunks := min(runtime.GOMAXPROCS(0), len(all)/scanChunk)
	if chunks < 2 {
		return filter(all)
	}
	parts := make([][]row, chunks)
	var wg sync.WaitGroup
	for i := range chunks {
		wg.Go(func() { parts[i] = filter(all[i*len(all)/chunks : (i+1)*len(all)/chunks]) })
	}
	wg.Wait()
	var out []row
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func comparePK(a, b any) int {
	if s, ok := a.(string); ok {
		return cmp.Compare(s, b.(string))
	}
	return cmp.Compare(a.(int64), b.(int64))
}

// Delete implements milvuspb.MilvusServiceServer. A delete by primary keys
// works on a released collection; any other expression needs the
// collection loaded, as in Milvus 2.4.
func (s *Server) Delete(ctx context.Context, req *milvuspb.DeleteRequest) (*milvuspb.MutationResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.collections[req.GetCollectionName()]
	if !ok {
		return &milvuspb.MutationResult{Status: errCollectionNotFound(req.GetCollectionName())}, nil
	}
	if req.GetExpr() == "" {
		return &milvuspb.MutationResult{Status: errInvalid("delete plan can't be empty or always true : %s", req.GetExpr())}, nil
	}
	e, err := parseExpr(req.GetExpr(), c.fields)
	if err != nil {
		return &milvuspb.MutationResult{Status: errInvalid("failed to create delete plan: %v", err)}, nil
	}
	if in, byPK := e.(inExpr); !(byPK && in.field == c.pk.GetName() && !in.not) && !c.loaded {
		return &milvuspb.MutationResult{Status: errCollectionNotLoaded(req.GetCollectionName())}, nil
	}
	var keys []any
	for _, r := range c.matching(e) {
		k := r[c.pk.GetName()]
		keys = append(keys, k)
		delete(c.rows, k)
	}
	c.filtered = nil
	return &milvuspb.MutationResult{Status: success(), IDs: c.ids(keys), DeleteCnt: int64(len(keys)), Timestamp: s.tick()}, nil
}

// Query implements milvuspb.MilvusServiceServer.
func (s *Server) Query(ctx context.Context, req *milvuspb.QueryRequest) (*milvuspb.QueryResults, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.collections[req.GetCollectionName()]
	if !ok {
		return &milvuspb.QueryResults{Status: errCollectionNotFound(req.GetCollectionName())}, nil
	}
	if !c.loaded {
		return &milvuspb.QueryResults{Status: errCollectionNotLoaded(req.GetCollectionName())}, nil
	}
	params := kv(req.GetQueryParams())
	limit, offset := -1, 0
	if v, ok := params["limit"]; ok {
		limit, _ = strconv.Atoi(v)
	}
	if v, ok := params["offset"]; ok {
		offset, _ = strconv.Atoi(v)
	}
	if limit != -1 && (limit < 1 || limit+offset > maxWindow) {
		return &milvuspb.QueryResults{Status: errInvalid("invalid max query result window, (offset+limit) should be in range [1, %d], but got %d", maxWindow, limit+offset)}, nil
	}
	if req.GetExpr() == "" && limit == -1 {
		return &milvuspb.QueryResults{Status: errInvalid("empty expression should be used with limit")}, nil
	}
	e, st := c.plan(req.GetExpr())
	if st != nil {
		return &milvuspb.QueryResults{Status: st}, nil
	}
	fields, st := c.outputFields(req.GetOutputFields(), true)
	if st != nil {
		return &milvuspb.QueryResults{Status: st}, nil
	}
	rows := c.matching(e)
	rows = rows[min(offset, len(rows)):]
	if limit >= 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	res := &milvuspb.QueryResults{Status: success(), CollectionName: req.GetCollectionName()}
	for _, f := range fields {
		res.FieldsData = append(res.FieldsData, encodeColumn(f, rows))
		res.OutputFields = append(res.OutputFields, f.GetName())
	}
	return res, nil
}
