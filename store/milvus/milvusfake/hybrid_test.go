package milvusfake

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/golang/protobuf/proto"
	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus-sdk-go/v2/client"
	"github.com/milvus-io/milvus-sdk-go/v2/entity"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// hybridSchema is collection name with a 4-dim dense field v and a
// sparse field s.
func hybridSchema(name string) *entity.Schema {
	return entity.NewSchema().WithName(name).
		WithField(entity.NewField().WithName("pk").WithDataType(entity.FieldTypeVarChar).WithMaxLength(16).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("n").WithDataType(entity.FieldTypeInt64)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(4)).
		WithField(entity.NewField().WithName("s").WithDataType(entity.FieldTypeSparseVector))
}

func sparseVec(t *testing.T, idx []uint32, val []float32) entity.SparseEmbedding {
	t.Helper()
	v, err := entity.NewSliceSparseEmbedding(slices.Clone(idx), slices.Clone(val))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// hybridRows are the rows of setupHybrid: row i has the dense vector
// (i, 1, 0, 0) and the terms below.
var hybridRows = []struct {
	idx []uint32
	val []float32
}{
	{[]uint32{1, 5}, []float32{1, 2}},
	{[]uint32{5}, []float32{0.5}},
	{[]uint32{2, 9}, []float32{3, 1}},
	{[]uint32{1, 2, 5}, []float32{0.25, 0.5, 4}},
	{[]uint32{7}, []float32{1}},
	{[]uint32{5, math.MaxUint32 - 1}, []float32{0, 1}}, // term 5 at weight 0: in no posting list
	{[]uint32{1}, []float32{2}},
	{[]uint32{9}, []float32{2}},
}

// setupHybrid creates collection "h" with an HNSW (COSINE) index on v and
// a sparse inverted (IP) index on s, loads it and inserts hybridRows.
func setupHybrid(t *testing.T, c client.Client) {
	t.Helper()
	ctx := context.Background()
	if err := c.CreateCollection(ctx, hybridSchema("h"), 1); err != nil {
		t.Fatal(err)
	}
	dense, _ := entity.NewIndexHNSW(entity.COSINE, 16, 64)
	if err := c.CreateIndex(ctx, "h", "v", dense, false); err != nil {
		t.Fatal(err)
	}
	if err := c.LoadCollection(ctx, "h", false); err == nil || !strings.Contains(err.Error(), "there is no vector index on field: [s]") {
		t.Fatalf("loading without an index on s = %v", err)
	}
	sparse, _ := entity.NewIndexSparseInverted(entity.IP, 0)
	if err := c.CreateIndex(ctx, "h", "s", sparse, false); err != nil {
		t.Fatal(err)
	}
	if err := c.LoadCollection(ctx, "h", false); err != nil {
		t.Fatal(err)
	}
	var pks []string
	var ns []int64
	var vs [][]float32
	var ss []entity.SparseEmbedding
	for i, r := range hybridRows {
		pks = append(pks, fmt.Sprintf("r%d", i))
		ns = append(ns, int64(i))
		vs = append(vs, []float32{float32(i), 1, 0, 0})
		ss = append(ss, sparseVec(t, r.idx, r.val))
	}
	if _, err := c.Upsert(ctx, "h", "", entity.NewColumnVarChar("pk", pks), entity.NewColumnInt64("n", ns),
		entity.NewColumnFloatVector("v", 4, vs), entity.NewColumnSparseVectors("s", ss)); err != nil {
		t.Fatal(err)
	}
}

func rawClient(t *testing.T, srv *Server) milvuspb.MilvusServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return milvuspb.NewMilvusServiceClient(conn)
}

func sparseBytes(idx []uint32, val []float32) []byte {
	var b []byte
	for i, x := range idx {
		b = binary.LittleEndian.AppendUint32(b, x)
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(val[i]))
	}
	return b
}

func TestSparseWireEncoding(t *testing.T) {
	srv, c := start(t)
	setupHybrid(t, c)
	// Read back over the wire, as the SDK decodes it.
	res, err := rawClient(t, srv).Query(context.Background(), &milvuspb.QueryRequest{CollectionName: "h", Expr: `n in [0, 5]`, OutputFields: []string{"s"}})
	if err != nil || res.GetStatus().GetCode() != 0 {
		t.Fatal(err, res.GetStatus())
	}
	var sv *schemapb.SparseFloatArray
	for _, fd := range res.GetFieldsData() {
		if fd.GetFieldName() == "s" {
			sv = fd.GetVectors().GetSparseFloatVector()
			if fd.GetType() != schemapb.DataType_SparseFloatVector || fd.GetVectors().GetDim() != sv.GetDim() {
				t.Fatalf("field data of s: %v", fd)
			}
		}
	}
	want := [][]byte{sparseBytes(hybridRows[0].idx, hybridRows[0].val), sparseBytes(hybridRows[5].idx, hybridRows[5].val)}
	if sv == nil || len(sv.GetContents()) != 2 || !slices.Equal(sv.GetContents()[0], want[0]) || !slices.Equal(sv.GetContents()[1], want[1]) {
		t.Fatalf("sparse rows on the wire = %v, want %v", sv.GetContents(), want)
	}
	if sv.GetDim() != math.MaxUint32 {
		t.Fatalf("sparse array dim = %d, want one past the largest index", sv.GetDim())
	}
	// And through the SDK.
	rs, err := c.Query(context.Background(), "h", nil, `n == 3`, []string{"s", "v"})
	if err != nil {
		t.Fatal(err)
	}
	row := rs.GetColumn("s").(*entity.ColumnSparseFloatVector).Data()[0]
	for j := range row.Len() {
		if i, v, _ := row.Get(j); i != hybridRows[3].idx[j] || v != hybridRows[3].val[j] {
			t.Fatalf("entry %d of r3 = %d → %v", j, i, v)
		}
	}
}

func TestSparseIndexRules(t *testing.T) {
	_, c := start(t)
	ctx := context.Background()
	if err := c.CreateCollection(ctx, hybridSchema("h"), 1); err != nil {
		t.Fatal(err)
	}
	cosine, _ := entity.NewIndexSparseInverted(entity.COSINE, 0)
	mustFail(t, c.CreateIndex(ctx, "h", "s", cosine, false), "metric type not found or not supported, supported: [IP]")
	l2, _ := entity.NewIndexSparseWAND(entity.L2, 0)
	mustFail(t, c.CreateIndex(ctx, "h", "s", l2, false), "supported: [IP]")
	hnsw, _ := entity.NewIndexHNSW(entity.IP, 16, 64)
	mustFail(t, c.CreateIndex(ctx, "h", "s", hnsw, false), "data type should be FloatVector")
	onDense, _ := entity.NewIndexSparseInverted(entity.IP, 0)
	mustFail(t, c.CreateIndex(ctx, "h", "v", onDense, false), "only sparse float vector is supported")
	drop := entity.NewGenericIndex("", entity.SparseInverted, map[string]string{"metric_type": "IP", "params": `{"drop_ratio_build": 1.5}`})
	mustFail(t, c.CreateIndex(ctx, "h", "s", drop, false), "invalid drop_ratio_build: 1.5, must be in range [0, 1)")
	// WAND with IP, and no metric at all (IP by default), are accepted.
	wand, _ := entity.NewIndexSparseWAND(entity.IP, 0.1)
	if err := c.CreateIndex(ctx, "h", "s", wand, false); err != nil {
		t.Fatal(err)
	}
	idx, err := c.DescribeIndex(ctx, "h", "s")
	if err != nil || len(idx) != 1 || idx[0].IndexType() != entity.SparseWAND || idx[0].Params()["metric_type"] != "IP" {
		t.Fatalf("sparse index = %+v, %v", idx, err)
	}
	if err := c.CreateCollection(ctx, hybridSchema("h2"), 1); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateIndex(ctx, "h2", "s", entity.NewGenericIndex("", entity.SparseInverted, map[string]string{}), false); err != nil {
		t.Fatal(err)
	}
	if idx, _ := c.DescribeIndex(ctx, "h2", "s"); len(idx) != 1 || idx[0].Params()["metric_type"] != "IP" {
		t.Fatalf("default sparse metric = %+v", idx)
	}

	withDim := hybridSchema("bad")
	withDim.Fields[3].WithDim(8)
	mustFail(t, c.CreateCollection(ctx, withDim, 1), "dim should not be specified for sparse vector field s")
	many := hybridSchema("many")
	for i := range 4 {
		many.WithField(entity.NewField().WithName(fmt.Sprintf("x%d", i)).WithDataType(entity.FieldTypeSparseVector))
	}
	mustFail(t, c.CreateCollection(ctx, many, 1), "maximum vector field's number should be limited to 4")
}

func TestSparseRowValidation(t *testing.T) {
	srv, c := start(t)
	setupHybrid(t, c)
	raw := rawClient(t, srv)
	upsert := func(row []byte) *commonpb.Status {
		t.Helper()
		fds := []*schemapb.FieldData{
			entity.NewColumnVarChar("pk", []string{"x"}).FieldData(),
			entity.NewColumnInt64("n", []int64{1}).FieldData(),
			entity.NewColumnFloatVector("v", 4, [][]float32{{1, 0, 0, 0}}).FieldData(),
			{Type: schemapb.DataType_SparseFloatVector, FieldName: "s", Field: &schemapb.FieldData_Vectors{Vectors: &schemapb.VectorField{
				Data: &schemapb.VectorField_SparseFloatVector{SparseFloatVector: &schemapb.SparseFloatArray{Contents: [][]byte{row}}}}}},
		}
		res, err := raw.Upsert(context.Background(), &milvuspb.UpsertRequest{CollectionName: "h", FieldsData: fds, NumRows: 1})
		if err != nil {
			t.Fatal(err)
		}
		return res.GetStatus()
	}
	tests := []struct {
		name string
		row  []byte
		want string
	}{
		{"empty", nil, "empty sparse float vector row"},
		{"odd length", []byte{1, 0, 0, 0, 0, 0}, "invalid data length in sparse float vector: 6"},
		{"index 2^32-1", sparseBytes([]uint32{math.MaxUint32}, []float32{1}), "invalid index in sparse float vector: must be less than 2^32-1"},
		{"unsorted", sparseBytes([]uint32{4, 2}, []float32{1, 1}), "unsorted or same indices in sparse float vector"},
		{"repeated", sparseBytes([]uint32{4, 4}, []float32{1, 1}), "unsorted or same indices in sparse float vector"},
		{"NaN", sparseBytes([]uint32{4}, []float32{float32(math.NaN())}), "value is NaN"},
		{"infinite", sparseBytes([]uint32{4}, []float32{float32(math.Inf(1))}), "value is infinity"},
	}
	for _, tt := range tests {
		if st := upsert(tt.row); st.GetCode() == 0 || !strings.Contains(st.GetReason(), tt.want) {
			t.Errorf("%s: status %v, want %q", tt.name, st, tt.want)
		}
	}
	if st := upsert(sparseBytes([]uint32{0, math.MaxUint32 - 1}, []float32{0, 1})); st.GetCode() != 0 {
		t.Fatalf("a valid row: %v", st)
	}
}

func TestSparseSearch(t *testing.T) {
	_, c := start(t)
	ctx := context.Background()
	setupHybrid(t, c)
	sp, _ := entity.NewIndexSparseInvertedSearchParam(0)
	q := sparseVec(t, []uint32{1, 5}, []float32{1, 2}).(entity.Vector)
	res, err := c.Search(ctx, "h", nil, "", []string{"n", "v", "s"}, []entity.Vector{q}, "s", entity.IP, 10, sp)
	if err != nil {
		t.Fatal(err)
	}
	// Rows holding term 1 or 5 at a non-zero weight: r0 (1+4), r1 (1),
	// r3 (0.25+8), r6 (2); r5 holds term 5 at weight 0 only.
	ids := res[0].IDs.(*entity.ColumnVarChar).Data()
	if !slices.Equal(ids, []string{"r3", "r0", "r6", "r1"}) || !slices.Equal(res[0].Scores, []float32{8.25, 5, 2, 1}) {
		t.Fatalf("sparse search = %v %v", ids, res[0].Scores)
	}
	var dense *entity.ColumnFloatVector
	var sparse *entity.ColumnSparseFloatVector
	for _, col := range res[0].Fields {
		switch col := col.(type) {
		case *entity.ColumnFloatVector:
			dense = col
		case *entity.ColumnSparseFloatVector:
			sparse = col
		}
	}
	if dense == nil || sparse == nil || !slices.Equal(dense.Data()[0], []float32{3, 1, 0, 0}) || sparse.Data()[0].Len() != 3 {
		t.Fatalf("vector output fields = %v, %v", dense, sparse)
	}
	top1, err := c.Search(ctx, "h", nil, `n > 0`, nil, []entity.Vector{q}, "s", entity.IP, 1, sp)
	if err != nil || !slices.Equal(top1[0].IDs.(*entity.ColumnVarChar).Data(), []string{"r3"}) {
		t.Fatalf("filtered top 1 = %v, %v", top1, err)
	}

	hnsw, _ := entity.NewIndexHNSWSearchParam(16)
	_, err = c.Search(ctx, "h", nil, "", nil, []entity.Vector{q}, "s", entity.COSINE, 3, sp)
	mustFail(t, err, "metric type not match[expected=IP][actual=COSINE]")
	_, err = c.Search(ctx, "h", nil, "", nil, []entity.Vector{entity.FloatVector{1, 0, 0, 0}}, "s", entity.IP, 3, sp)
	mustFail(t, err, "vector type must be the same, field s - type VECTOR_SPARSE_FLOAT, search info type VECTOR_FLOAT")
	_, err = c.Search(ctx, "h", nil, "", nil, []entity.Vector{q}, "v", entity.COSINE, 3, hnsw)
	mustFail(t, err, "vector type must be the same, field v - type VECTOR_FLOAT, search info type VECTOR_SPARSE_FLOAT")
	_, err = c.Search(ctx, "h", nil, "", nil, []entity.Vector{q}, "nope", entity.IP, 3, sp)
	mustFail(t, err, "failed to get field schema by name: fieldName(nope) not found")
	_, err = c.Search(ctx, "h", nil, "", nil, []entity.Vector{q}, "", entity.IP, 3, sp)
	mustFail(t, err, "multiple anns_fields exist, please specify a anns_field in search_params")
	flat, _ := entity.NewIndexFlatSearchParam()
	if _, err = c.Search(ctx, "h", nil, "", nil, []entity.Vector{q}, "s", entity.IP, 3, flat); err != nil {
		t.Fatalf("a sparse search without parameters: %v", err)
	}
}

// fusedWant computes a weighted hybrid search of hybridRows but row skip
// by hand: each side's top k, squashed ((1+cos)/2 and 1/2+atan(ip)/π),
// weighted, summed.
func fusedWant(dq []float32, sq map[uint32]float32, k int, wd, ws float32, skip int) ([]string, []float32) {
	type s struct {
		id    string
		score float32
	}
	var dense, sparse []s
	for i, r := range hybridRows {
		if i == skip {
			continue
		}
		v := []float32{float32(i), 1, 0, 0}
		var dot, nq, nv float64
		for j := range v {
			dot += float64(dq[j]) * float64(v[j])
			nq += float64(dq[j]) * float64(dq[j])
			nv += float64(v[j]) * float64(v[j])
		}
		dense = append(dense, s{fmt.Sprintf("r%d", i), float32(dot / math.Sqrt(nq*nv))})
		var ip float32
		shares := false
		for j, x := range r.idx {
			if w, ok := sq[x]; ok && r.val[j] != 0 {
				ip += w * r.val[j]
				shares = true
			}
		}
		if shares {
			sparse = append(sparse, s{fmt.Sprintf("r%d", i), ip})
		}
	}
	byScore := func(a, b s) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	}
	slices.SortFunc(dense, byScore)
	slices.SortFunc(sparse, byScore)
	fused := map[string]float32{}
	for _, h := range dense[:min(k, len(dense))] {
		fused[h.id] += wd * (1 + h.score) * 0.5
	}
	for _, h := range sparse[:min(k, len(sparse))] {
		fused[h.id] += ws * (0.5 + float32(math.Atan(float64(h.score)))/math.Pi)
	}
	var all []s
	for id, f := range fused {
		all = append(all, s{id, f})
	}
	slices.SortFunc(all, byScore)
	var ids []string
	var scores []float32
	for _, h := range all {
		ids = append(ids, h.id)
		scores = append(scores, h.score)
	}
	return ids, scores
}

func TestHybridSearchWeighted(t *testing.T) {
	_, c := start(t)
	ctx := context.Background()
	setupHybrid(t, c)
	dq := []float32{0.2, 1, 0.5, 0}
	sq := map[uint32]float32{5: 1, 9: 0.5}
	hnsw, _ := entity.NewIndexHNSWSearchParam(16)
	sp, _ := entity.NewIndexSparseInvertedSearchParam(0)
	reqs := []*client.ANNSearchRequest{
		client.NewANNSearchRequest("v", entity.COSINE, `n != 2`, []entity.Vector{entity.FloatVector(dq)}, hnsw, 3),
		client.NewANNSearchRequest("s", entity.IP, `n != 2`, []entity.Vector{sparseVec(t, []uint32{5, 9}, []float32{1, 0.5}).(entity.Vector)}, sp, 3),
	}
	res, err := c.HybridSearch(ctx, "h", nil, 10, []string{"n", "v", "s"}, client.NewWeightedReranker([]float64{0.7, 0.3}), reqs)
	if err != nil {
		t.Fatal(err)
	}
	// Dense: r0, r1, r3; sparse: r3 (4), r0 (2), r7 (1); r2 is filtered out.
	wantIDs, wantScores := fusedWant(dq, sq, 3, 0.7, 0.3, 2)
	if len(wantIDs) != 4 {
		t.Fatalf("the union by hand = %v", wantIDs)
	}
	ids := res[0].IDs.(*entity.ColumnVarChar).Data()
	if len(res) != 1 || !slices.Equal(ids, wantIDs) {
		t.Fatalf("hybrid ids = %v, want %v", ids, wantIDs)
	}
	for i := range ids {
		if math.Abs(float64(res[0].Scores[i]-wantScores[i])) > 1e-6 {
			t.Fatalf("hybrid scores = %v, want %v", res[0].Scores, wantScores)
		}
	}
	if len(res[0].Fields) != 3 {
		t.Fatalf("output fields = %v", res[0].Fields)
	}
	for _, col := range res[0].Fields {
		if col.Len() != len(ids) {
			t.Fatalf("column %s has %d values for %d hits", col.Name(), col.Len(), len(ids))
		}
	}

	// The limit cuts the fused list.
	res, err = c.HybridSearch(ctx, "h", nil, 2, nil, client.NewWeightedReranker([]float64{0.7, 0.3}), reqs)
	if err != nil || !slices.Equal(res[0].IDs.(*entity.ColumnVarChar).Data(), wantIDs[:2]) {
		t.Fatalf("limit 2 = %v, %v", res, err)
	}
}

func TestHybridSearchRRF(t *testing.T) {
	_, c := start(t)
	ctx := context.Background()
	setupHybrid(t, c)
	hnsw, _ := entity.NewIndexHNSWSearchParam(16)
	sp, _ := entity.NewIndexSparseInvertedSearchParam(0)
	reqs := []*client.ANNSearchRequest{
		// Dense: r7, r6, r5 (cosine to (1,0,0,0) grows with i); sparse on
		// term 9: r2 (1), r7 (2) → r7, r2.
		client.NewANNSearchRequest("v", entity.COSINE, "", []entity.Vector{entity.FloatVector{1, 0, 0, 0}}, hnsw, 3),
		client.NewANNSearchRequest("s", entity.IP, "", []entity.Vector{sparseVec(t, []uint32{9}, []float32{1}).(entity.Vector)}, sp, 3),
	}
	res, err := c.HybridSearch(ctx, "h", nil, 10, nil, client.NewRRFReranker(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	ids := res[0].IDs.(*entity.ColumnVarChar).Data()
	want := []float32{1.0/61 + 1.0/61, 1.0 / 62, 1.0 / 62, 1.0 / 63}
	if !slices.Equal(ids, []string{"r7", "r2", "r6", "r5"}) {
		t.Fatalf("rrf ids = %v", ids)
	}
	for i := range want {
		if math.Abs(float64(res[0].Scores[i]-want[i])) > 1e-7 {
			t.Fatalf("rrf scores = %v, want %v", res[0].Scores, want)
		}
	}
}

func TestHybridSearchErrors(t *testing.T) {
	srv, c := start(t)
	ctx := context.Background()
	setupHybrid(t, c)
	hnsw, _ := entity.NewIndexHNSWSearchParam(16)
	sp, _ := entity.NewIndexSparseInvertedSearchParam(0)
	dense := func(field string, m entity.MetricType, v entity.Vector) *client.ANNSearchRequest {
		return client.NewANNSearchRequest(field, m, "", []entity.Vector{v}, hnsw, 3)
	}
	sparse := func(field string, m entity.MetricType, v entity.Vector) *client.ANNSearchRequest {
		return client.NewANNSearchRequest(field, m, "", []entity.Vector{v}, sp, 3)
	}
	dv := entity.FloatVector{1, 0, 0, 0}
	sv := sparseVec(t, []uint32{5}, []float32{1}).(entity.Vector)
	weighted := client.NewWeightedReranker([]float64{0.5, 0.5})
	tests := []struct {
		name     string
		reranker client.Reranker
		reqs     []*client.ANNSearchRequest
		want     string
	}{
		{"weights for one of two", client.NewWeightedReranker([]float64{1}), []*client.ANNSearchRequest{dense("v", entity.COSINE, dv), sparse("s", entity.IP, sv)},
			"the length of weights param mismatch with ann search requests: invalid parameter[expected=2][actual=1]"},
		{"weight above 1", client.NewWeightedReranker([]float64{1.5, 0}), []*client.ANNSearchRequest{dense("v", entity.COSINE, dv), sparse("s", entity.IP, sv)},
			"rank param weight should be in range [0, 1]"},
		{"rrf k 0", client.NewRRFReranker().WithK(0), []*client.ANNSearchRequest{dense("v", entity.COSINE, dv)}, "k not found in rank_params"},
		{"rrf k too large", client.NewRRFReranker().WithK(20000), []*client.ANNSearchRequest{dense("v", entity.COSINE, dv)}, "The rank params k should be in range (0, 16384)"},
		{"dense vector against the sparse field", weighted, []*client.ANNSearchRequest{dense("v", entity.COSINE, dv), sparse("s", entity.IP, dv)},
			"vector type must be the same, field s - type VECTOR_SPARSE_FLOAT, search info type VECTOR_FLOAT"},
		{"sparse vector against the dense field", weighted, []*client.ANNSearchRequest{dense("v", entity.COSINE, sv), sparse("s", entity.IP, sv)},
			"vector type must be the same, field v - type VECTOR_FLOAT, search info type VECTOR_SPARSE_FLOAT"},
		{"unknown anns field", weighted, []*client.ANNSearchRequest{dense("v", entity.COSINE, dv), sparse("nope", entity.IP, sv)},
			"failed to get field schema by name: fieldName(nope) not found"},
		{"metric of another index", weighted, []*client.ANNSearchRequest{dense("v", entity.COSINE, dv), sparse("s", entity.COSINE, sv)},
			"metric type not match[expected=IP][actual=COSINE]"},
		{"no sub-search", weighted, nil, "minimum of ann search requests is 1"},
	}
	for _, tt := range tests {
		_, err := c.HybridSearch(ctx, "h", nil, 5, nil, tt.reranker, tt.reqs)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}

	// Rank parameters the SDK does not send, straight over gRPC.
	raw := rawClient(t, srv)
	sub := func(values ...[]byte) *milvuspb.SearchRequest {
		ph, _ := proto.Marshal(&commonpb.PlaceholderGroup{Placeholders: []*commonpb.PlaceholderValue{{Tag: "$0", Type: commonpb.PlaceholderType_SparseFloatVector, Values: values}}})
		return &milvuspb.SearchRequest{CollectionName: "h", PlaceholderGroup: ph, SearchParams: []*commonpb.KeyValuePair{
			{Key: "anns_field", Value: "s"}, {Key: "topk", Value: "3"}, {Key: "metric_type", Value: "IP"}, {Key: "params", Value: `{"drop_ratio_search":0}`}}}
	}
	q := sparseBytes([]uint32{5}, []float32{1})
	hybrid := func(params map[string]string, subs ...*milvuspb.SearchRequest) *milvuspb.SearchResults {
		t.Helper()
		res, err := raw.HybridSearch(ctx, &milvuspb.HybridSearchRequest{CollectionName: "h", Requests: subs, RankParams: pairs(params)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	w := `{"weights":[1]}`
	for _, tt := range []struct {
		params map[string]string
		subs   []*milvuspb.SearchRequest
		want   string
	}{
		{map[string]string{"strategy": "max", "params": "{}", "limit": "3"}, []*milvuspb.SearchRequest{sub(q)}, "unsupported rank type max"},
		{map[string]string{"strategy": "weighted", "limit": "3"}, []*milvuspb.SearchRequest{sub(q)}, "params not found in rank_params"},
		{map[string]string{"strategy": "weighted", "params": `{}`, "limit": "3"}, []*milvuspb.SearchRequest{sub(q)}, "weights not found in rank_params"},
		{map[string]string{"strategy": "weighted", "params": w}, []*milvuspb.SearchRequest{sub(q)}, "limit not found in rank_params"},
		{map[string]string{"strategy": "weighted", "params": w, "limit": "0"}, []*milvuspb.SearchRequest{sub(q)}, "invalid max query result window"},
		{map[string]string{"strategy": "weighted", "params": w, "limit": "3", "round_decimal": "7"}, []*milvuspb.SearchRequest{sub(q)}, "round_decimal [7] is invalid"},
		{map[string]string{"strategy": "weighted", "params": w, "limit": "3"}, []*milvuspb.SearchRequest{sub(q, q)}, "nq should be equal to 1"},
	} {
		if res := hybrid(tt.params, tt.subs...); !strings.Contains(res.GetStatus().GetReason(), tt.want) {
			t.Errorf("rank params %v: %v, want %q", tt.params, res.GetStatus(), tt.want)
		}
	}
	drop := sub(q)
	drop.SearchParams[3].Value = `{"drop_ratio_search":1.5}`
	if res := hybrid(map[string]string{"strategy": "weighted", "params": w, "limit": "3"}, drop); !strings.Contains(res.GetStatus().GetReason(), "invalid drop_ratio_search: 1.5, must be in range [0, 1)") {
		t.Errorf("drop ratio 1.5: %v", res.GetStatus())
	}
	// round_decimal rounds the fused scores; offset skips the best.
	res := hybrid(map[string]string{"strategy": "weighted", "params": `{"weights":[0.3]}`, "limit": "2", "offset": "1", "round_decimal": "2"}, sub(q))
	// Term 5: r3 (4), r0 (2), r1 (0.5): after the offset r0, r1.
	want := []float32{float32(math.Round(0.3*(0.5+math.Atan(2)/math.Pi)*100) / 100), float32(math.Round(0.3*(0.5+math.Atan(0.5)/math.Pi)*100) / 100)}
	if res.GetStatus().GetCode() != 0 || !slices.Equal(res.GetResults().GetIds().GetStrId().GetData(), []string{"r0", "r1"}) || !slices.Equal(res.GetResults().GetScores(), want) {
		t.Fatalf("offset 1, limit 2, two decimals: %v, want r0, r1 with %v", res, want)
	}
	// Without a strategy Milvus fuses by rrf, k = 60.
	res = hybrid(map[string]string{"limit": "1"}, sub(q))
	if res.GetStatus().GetCode() != 0 || !slices.Equal(res.GetResults().GetScores(), []float32{1.0 / 61}) {
		t.Fatalf("default strategy: %v", res)
	}

	srv.Release("h")
	_, err := c.HybridSearch(ctx, "h", nil, 5, nil, weighted, []*client.ANNSearchRequest{dense("v", entity.COSINE, dv), sparse("s", entity.IP, sv)})
	mustFail(t, err, "collection not loaded[collection=h]")
}
