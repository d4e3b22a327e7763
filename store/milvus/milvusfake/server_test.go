package milvusfake

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus-sdk-go/v2/client"
	"github.com/milvus-io/milvus-sdk-go/v2/entity"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// The fake is checked through the real SDK, as the adapter uses it.

func start(t *testing.T) (*Server, client.Client) {
	t.Helper()
	srv, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	c, err := client.NewClient(context.Background(), client.Config{Address: srv.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return srv, c
}

func testSchema(name string, dim int64) *entity.Schema {
	return entity.NewSchema().WithName(name).
		WithField(entity.NewField().WithName("pk").WithDataType(entity.FieldTypeVarChar).WithMaxLength(16).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("tenant").WithDataType(entity.FieldTypeVarChar).WithMaxLength(16).WithIsPartitionKey(true)).
		WithField(entity.NewField().WithName("n").WithDataType(entity.FieldTypeInt64)).
		WithField(entity.NewField().WithName("tags").WithDataType(entity.FieldTypeArray).WithElementType(entity.FieldTypeVarChar).WithMaxCapacity(2).WithMaxLength(8)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(dim))
}

// setup creates collection "c" with 4-dim vectors and an HNSW index, loads
// it unless told not to, and inserts rows r0..r9.
func setup(t *testing.T, c client.Client, load bool) {
	t.Helper()
	ctx := context.Background()
	if err := c.CreateCollection(ctx, testSchema("c", 4), 1); err != nil {
		t.Fatal(err)
	}
	idx, _ := entity.NewIndexHNSW(entity.COSINE, 16, 64)
	if err := c.CreateIndex(ctx, "c", "v", idx, false); err != nil {
		t.Fatal(err)
	}
	if load {
		if err := c.LoadCollection(ctx, "c", true); err != nil {
			t.Fatal(err)
		}
	}
	var pks, tenants []string
	var ns []int64
	var tags [][][]byte
	var vs [][]float32
	for i := range 10 {
		pks = append(pks, fmt.Sprintf("r%d", 9-i)) // inserted out of key order
		tenants = append(tenants, []string{"a", "b"}[i%2])
		ns = append(ns, int64(9-i))
		tags = append(tags, [][]byte{[]byte(fmt.Sprintf("t%d", (9-i)%3))})
		vs = append(vs, []float32{float32(9 - i), 1, 0, 0})
	}
	_, err := c.Upsert(ctx, "c", "",
		entity.NewColumnVarChar("pk", pks), entity.NewColumnVarChar("tenant", tenants), entity.NewColumnInt64("n", ns),
		entity.NewColumnVarCharArray("tags", tags), entity.NewColumnFloatVector("v", 4, vs))
	if err != nil {
		t.Fatal(err)
	}
}

func mustFail(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error = %v, want one containing %q", err, want)
	}
}

func TestNotLoaded(t *testing.T) {
	srv, c := start(t)
	ctx := context.Background()
	setup(t, c, false)
	sp, _ := entity.NewIndexHNSWSearchParam(16)
	_, err := c.Search(ctx, "c", nil, "", []string{"n"}, []entity.Vector{entity.FloatVector{1, 0, 0, 0}}, "v", entity.COSINE, 3, sp)
	mustFail(t, err, "collection not loaded[collection=c]")
	_, err = c.Query(ctx, "c", nil, `n > 1`, []string{"n"})
	mustFail(t, err, "collection not loaded")

	if err := c.LoadCollection(ctx, "c", false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query(ctx, "c", nil, `n > 1`, []string{"n"}); err != nil {
		t.Fatalf("query after load: %v", err)
	}
	srv.Release("c")
	if st, _ := c.GetLoadState(ctx, "c", nil); st != entity.LoadStateNotLoad {
		t.Fatalf("load state after Release = %v", st)
	}
}

func TestLoadNeedsIndex(t *testing.T) {
	_, c := start(t)
	ctx := context.Background()
	if err := c.CreateCollection(ctx, testSchema("c", 4), 1); err != nil {
		t.Fatal(err)
	}
	mustFail(t, c.LoadCollection(ctx, "c", true), "index not found[collection=c]")
	_, err := c.DescribeIndex(ctx, "c", "v")
	mustFail(t, err, "index not found")
}

func TestDimensionMismatch(t *testing.T) {
	_, c := start(t)
	ctx := context.Background()
	setup(t, c, true)
	sp, _ := entity.NewIndexHNSWSearchParam(16)
	_, err := c.Search(ctx, "c", nil, "", nil, []entity.Vector{entity.FloatVector{1, 0}}, "v", entity.COSINE, 3, sp)
	mustFail(t, err, "vector dimension mismatch, expected vector size(byte) 16, actual 8.")
}

func TestBadExpression(t *testing.T) {
	_, c := start(t)
	ctx := context.Background()
	setup(t, c, true)
	sp, _ := entity.NewIndexHNSWSearchParam(16)
	_, err := c.Search(ctx, "c", nil, `n >`, nil, []entity.Vector{entity.FloatVector{1, 0, 0, 0}}, "v", entity.COSINE, 3, sp)
	mustFail(t, err, "failed to create query plan: cannot parse expression: n >")
	_, err = c.Query(ctx, "c", nil, `tenant like "a%"`, []string{"n"})
	mustFail(t, err, "cannot parse expression")
	mustFail(t, c.Delete(ctx, "c", "", `pk in [`), "cannot parse expression")
}

func TestQueryOrderAndLimit(t *testing.T) {
	_, c := start(t)
	ctx := context.Background()
	setup(t, c, true)
	rs, err := c.Query(ctx, "c", nil, `tenant == "a" && pk > "r2"`, []string{"n"}, client.WithLimit(2))
	if err != nil {
		t.Fatal(err)
	}
	pks := rs.GetColumn("pk").(*entity.ColumnVarChar).Data()
	if !slices.Equal(pks, []string{"r3", "r5"}) {
		t.Fatalf("first two keys of tenant a after r2 = %v", pks)
	}
	rs, err = c.Query(ctx, "c", nil, `array_contains_any(tags, ["t0"]) and not (n in [0, 3])`, []string{"tags"})
	if err != nil {
		t.Fatal(err)
	}
	if pks := rs.GetColumn("pk").(*entity.ColumnVarChar).Data(); !slices.Equal(pks, []string{"r6", "r9"}) {
		t.Fatalf("array filter = %v", pks)
	}
}

func TestSearchAndDelete(t *testing.T) {
	_, c := start(t)
	ctx := context.Background()
	setup(t, c, true)
	sp, _ := entity.NewIndexHNSWSearchParam(16)
	res, err := c.Search(ctx, "c", nil, `tenant == "b"`, []string{"n"}, []entity.Vector{entity.FloatVector{1, 0, 0, 0}}, "v", entity.COSINE, 2, sp)
	if err != nil {
		t.Fatal(err)
	}
	// Tenant b holds r8, r6, r4, r2, r0; cosine to (1,0,0,0) grows with n.
	ids := res[0].IDs.(*entity.ColumnVarChar).Data()
	if !slices.Equal(ids, []string{"r8", "r6"}) || res[0].Scores[0] <= res[0].Scores[1] {
		t.Fatalf("search = %v %v", ids, res[0].Scores)
	}
	_, err = c.Search(ctx, "c", nil, "", nil, []entity.Vector{entity.FloatVector{1, 0, 0, 0}}, "v", entity.IP, 2, sp)
	mustFail(t, err, "metric type not match")
	small, _ := entity.NewIndexHNSWSearchParam(1)
	_, err = c.Search(ctx, "c", nil, "", nil, []entity.Vector{entity.FloatVector{1, 0, 0, 0}}, "v", entity.COSINE, 2, small)
	mustFail(t, err, "ef(1) should be larger than k(2)")

	if err := c.Delete(ctx, "c", "", `tenant == "b" && pk in ["r8", "r1"]`); err != nil {
		t.Fatal(err)
	}
	rs, err := c.Query(ctx, "c", nil, `pk in ["r8", "r1"]`, []string{"n"})
	if err != nil {
		t.Fatal(err)
	}
	if pks := rs.GetColumn("pk").(*entity.ColumnVarChar).Data(); !slices.Equal(pks, []string{"r1"}) {
		t.Fatalf("after deleting r8 (tenant b) and r1 (not tenant b): %v", pks)
	}
}

func TestCreateCollectionIdempotence(t *testing.T) {
	_, c := start(t)
	ctx := context.Background()
	if err := c.CreateCollection(ctx, testSchema("c", 4), 1); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateCollection(ctx, testSchema("c", 4), 1); err != nil {
		t.Fatalf("creating an identical collection again: %v", err)
	}
	mustFail(t, c.CreateCollection(ctx, testSchema("c", 8), 1), "create duplicate collection with different parameters")
	coll, err := c.DescribeCollection(ctx, "c")
	if err != nil || coll.Schema.Fields[4].TypeParams["dim"] != "4" {
		t.Fatalf("describe = %+v, %v", coll, err)
	}
}

// TestUpsertValidation sends rows the SDK would catch itself, straight over
// gRPC, to check the server-side checks Milvus also makes.
func TestUpsertValidation(t *testing.T) {
	srv, c := start(t)
	setup(t, c, true)
	conn, err := grpc.NewClient(srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	raw := milvuspb.NewMilvusServiceClient(conn)
	str := func(name string, vs ...string) *schemapb.FieldData {
		return entity.NewColumnVarChar(name, vs).FieldData()
	}
	base := func() []*schemapb.FieldData {
		return []*schemapb.FieldData{
			str("pk", "x1"), str("tenant", "a"), entity.NewColumnInt64("n", []int64{1}).FieldData(),
			entity.NewColumnVarCharArray("tags", [][][]byte{{[]byte("t")}}).FieldData(),
			entity.NewColumnFloatVector("v", 4, [][]float32{{1, 0, 0, 0}}).FieldData(),
		}
	}
	tests := []struct {
		name   string
		change func([]*schemapb.FieldData) []*schemapb.FieldData
		rows   uint32
		want   string
	}{
		{"vector of another dim", func(fd []*schemapb.FieldData) []*schemapb.FieldData {
			fd[4] = entity.NewColumnFloatVector("v", 2, [][]float32{{1, 0}}).FieldData()
			return fd
		}, 1, "the dim (2) of field data(v) is not equal to schema dim (4)"},
		{"varchar too long", func(fd []*schemapb.FieldData) []*schemapb.FieldData {
			fd[0] = str("pk", strings.Repeat("x", 17))
			return fd
		}, 1, "length of varchar field pk exceeds max length"},
		{"array over capacity", func(fd []*schemapb.FieldData) []*schemapb.FieldData {
			fd[3] = entity.NewColumnVarCharArray("tags", [][][]byte{{[]byte("a"), []byte("b"), []byte("c")}}).FieldData()
			return fd
		}, 1, "exceeds max capacity (2)"},
		{"missing field", func(fd []*schemapb.FieldData) []*schemapb.FieldData { return fd[:4] }, 1, "fieldSchema(v) has no corresponding fieldData pass in"},
		{"unknown field", func(fd []*schemapb.FieldData) []*schemapb.FieldData {
			return append(fd, entity.NewColumnInt64("extra", []int64{1}).FieldData())
		}, 1, "Attempt to insert an unexpected field `extra`"},
		{"duplicate keys", func([]*schemapb.FieldData) []*schemapb.FieldData {
			return []*schemapb.FieldData{
				str("pk", "x1", "x1"), str("tenant", "a", "a"), entity.NewColumnInt64("n", []int64{1, 2}).FieldData(),
				entity.NewColumnVarCharArray("tags", [][][]byte{nil, nil}).FieldData(),
				entity.NewColumnFloatVector("v", 4, [][]float32{{1, 0, 0, 0}, {0, 1, 0, 0}}).FieldData(),
			}
		}, 2, "duplicate primary keys are not allowed in the same batch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := raw.Upsert(context.Background(), &milvuspb.UpsertRequest{CollectionName: "c", FieldsData: tt.change(base()), NumRows: tt.rows})
			if err != nil {
				t.Fatal(err)
			}
			if st := res.GetStatus(); st.GetCode() != 1100 || !strings.Contains(st.GetReason(), tt.want) {
				t.Fatalf("status = %v, want code 1100 and %q", st, tt.want)
			}
		})
	}
}
