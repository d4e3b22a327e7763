package milvusfake

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/golang/protobuf/proto"
	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/grpc"
)

// Server is a fake Milvus serving gRPC on a loopback port. Its zero value
// is not usable; call Start.
type Server struct {
	milvuspb.UnimplementedMilvusServiceServer

	lis  net.Listener
	grpc *grpc.Server

	mu          sync.Mutex
	collections map[string]*collection
	lastID      int64  // collection, field and index IDs
	clock       uint64 // mutation timestamps

	callMu     sync.Mutex
	calls      Calls
	lastHybrid *milvuspb.HybridSearchRequest
	searches   []*milvuspb.SearchRequest // the last keptSearches
}

// keptSearches is how many of the last Search requests a server keeps.
const keptSearches = 16

// Calls counts the RPCs a server served, by method name ("Search",
// "HybridSearch", ...).
type Calls map[string]int

// Sub returns the calls made since before, without the methods not called.
func (c Calls) Sub(before Calls) Calls {
	out := Calls{}
	for m, n := range c {
		if d := n - before[m]; d > 0 {
			out[m] = d
		}
	}
	return out
}

// Calls returns how many times each RPC was called so far.
func (s *Server) Calls() Calls {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	return maps.Clone(s.calls)
}

// LastHybridSearch returns the last HybridSearch request served, for tests
// of what a client sends, or nil.
func (s *Server) LastHybridSearch() *milvuspb.HybridSearchRequest {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	if s.lastHybrid == nil {
		return nil
	}
	return proto.Clone(s.lastHybrid).(*milvuspb.HybridSearchRequest)
}

// LastSearches returns the last n Search requests served (at most 16),
// oldest first, for tests of what a client sends.
func (s *Server) LastSearches(n int) []*milvuspb.SearchRequest {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	var out []*milvuspb.SearchRequest
	for _, r := range s.searches[max(0, len(s.searches)-n):] {
		out = append(out, proto.Clone(r).(*milvuspb.SearchRequest))
	}
	return out
}

// record counts every call, and keeps the last hybrid search and the last
// searches.
func (s *Server) record(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	method := info.FullMethod[strings.LastIndex(info.FullMethod, "/")+1:]
	s.callMu.Lock()
	s.calls[method]++
	if h, ok := req.(*milvuspb.HybridSearchRequest); ok {
		s.lastHybrid = proto.Clone(h).(*milvuspb.HybridSearchRequest)
	}
	if r, ok := req.(*milvuspb.SearchRequest); ok {
		s.searches = append(s.searches, proto.Clone(r).(*milvuspb.SearchRequest))
		if len(s.searches) > keptSearches {
			s.searches = s.searches[len(s.searches)-keptSearches:]
		}
	}
	s.callMu.Unlock()
	return handler(ctx, req)
}

// collection is one collection: schema, indexes, load state and rows.
type collection struct {
	id          int64
	schema      *schemapb.CollectionSchema
	fields      map[string]*schemapb.FieldSchema
	pk          *schemapb.FieldSchema
	vectors     []*schemapb.FieldSchema // float and sparse float vector fields, in schema order
	consistency commonpb.ConsistencyLevel
	shards      int32
	partitions  int64
	indexes     map[string]*index // by field name
	loaded      bool
	rows        map[any]row // primary key (string or int64) → row
	// filtered keeps the rows each search expression matched until the
	// next write, as Milvus keeps its segments' scalar indexes: a filter
	// is evaluated once per write, not once per search.
	filtered map[string][]row
}

// maxVectorFields is Milvus 2.4's limit on vector fields per collection.
const maxVectorFields = 4

// index is the index of one vector field. The fake records it and checks
// searches against it, but always searches exactly.
type index struct {
	id     int64
	name   string
	field  string
	params map[string]string // flattened: index_type, metric_type, M, ...
}

func (ix *index) metric() string { return ix.params["metric_type"] }

// Start serves a fake Milvus on 127.0.0.1 until Close.
func Start() (*Server, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("milvusfake: listen: %w", err)
	}
	s := &Server{lis: lis, collections: map[string]*collection{}, calls: Calls{}}
	s.grpc = grpc.NewServer(grpc.UnaryInterceptor(s.record))
	milvuspb.RegisterMilvusServiceServer(s.grpc, s)
	go s.grpc.Serve(lis) //nolint:errcheck // Serve returns when Close stops the server.
	return s, nil
}

// Addr is the host:port to give a Milvus client.
func (s *Server) Addr() string { return s.lis.Addr().String() }

// Close stops the server and drops every collection.
func (s *Server) Close() { s.grpc.Stop() }

// Release releases a collection from memory, as an operator (or Milvus
// itself, under memory pressure) may do behind the adapter's back. It
// returns false if the collection does not exist.
func (s *Server) Release(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.collections[name]
	if ok {
		c.loaded = false
	}
	return ok
}

// Statuses, worded and coded as Milvus 2.4 words and codes them (see
// pkg/util/merr in the Milvus repository). The SDK reports only the reason.

func success() *commonpb.Status { return &commonpb.Status{} }

func failure(code int32, legacy commonpb.ErrorCode, reason string) *commonpb.Status {
	return &commonpb.Status{ErrorCode: legacy, Code: code, Reason: reason, Detail: reason}
}

func errCollectionNotFound(name string) *commonpb.Status {
	return failure(100, commonpb.ErrorCode_CollectionNotExists, fmt.Sprintf("collection not found[database=default][collection=%s]", name))
}

func errCollectionNotLoaded(name string) *commonpb.Status {
	return failure(101, commonpb.ErrorCode_UnexpectedError, fmt.Sprintf("collection not loaded[collection=%s]", name))
}

func errIndexNotFound(name string) *commonpb.Status {
	return failure(700, commonpb.ErrorCode_IndexNotExist, fmt.Sprintf("index not found[collection=%s]", name))
}

func errInvalid(format string, args ...any) *commonpb.Status {
	return failure(1100, commonpb.ErrorCode_IllegalArgument, fmt.Sprintf(format, args...)+": invalid parameter")
}

func errSegcore(format string, args ...any) *commonpb.Status {
	return failure(2000, commonpb.ErrorCode_UnexpectedError, fmt.Sprintf(format, args...)+": segcore error")
}

// errUnexpected is a plain error of Milvus' (errors.New in its code),
// which it reports with code 65535.
func errUnexpected(format string, args ...any) *commonpb.Status {
	return failure(65535, commonpb.ErrorCode_UnexpectedError, fmt.Sprintf(format, args...))
}

// Connect implements milvuspb.MilvusServiceServer.
func (s *Server) Connect(ctx context.Context, req *milvuspb.ConnectRequest) (*milvuspb.ConnectResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastID++
	return &milvuspb.ConnectResponse{
		Status:     success(),
		ServerInfo: &commonpb.ServerInfo{BuildTags: "milvusfake", Reserved: map[string]string{"fake": "true"}},
		Identifier: s.lastID,
	}, nil
}

var collectionNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,254}$`)

// CreateCollection implements milvuspb.MilvusServiceServer. Like Milvus, it
// succeeds when an identical collection exists and fails when a different
// one does.
func (s *Server) CreateCollection(ctx context.Context, req *milvuspb.CreateCollectionRequest) (*commonpb.Status, error) {
	name := req.GetCollectionName()
	if !collectionNameRE.MatchString(name) {
		return errInvalid("Invalid collection name: %s. collection name can only contain numbers, letters and underscores", name), nil
	}
	sch := &schemapb.CollectionSchema{}
	if err := proto.Unmarshal(req.GetSchema(), sch); err != nil {
		return errInvalid("failed to unmarshal collection schema: %v", err), nil
	}
	if sch.GetName() != name {
		return errInvalid("collection name [%s] not matches schema name [%s]", name, sch.GetName()), nil
	}
	c := &collection{
		schema: sch, fields: map[string]*schemapb.FieldSchema{}, rows: map[any]row{}, indexes: map[string]*index{},
		consistency: req.GetConsistencyLevel(), shards: max(req.GetShardsNum(), 1), partitions: req.GetNumPartitions(),
	}
	partitionKeys := 0
	for _, f := range sch.GetFields() {
		if _, dup := c.fields[f.GetName()]; dup {
			return errInvalid("duplicated field name %s found", f.GetName()), nil
		}
		c.fields[f.GetName()] = f
		params := kv(f.GetTypeParams())
		switch f.GetDataType() {
		case schemapb.DataType_VarChar:
			if _, err := strconv.Atoi(params["max_length"]); err != nil {
				return errInvalid("type param(max_length) should be specified for varChar field(%s) of collection %s", f.GetName(), name), nil
			}
		case schemapb.DataType_FloatVector:
			if dim, err := strconv.Atoi(params["dim"]); err != nil || dim < 1 || dim > 32768 {
				return errInvalid("dimension is not defined in field type params of field %s, check type param `dim` for vector field", f.GetName()), nil
			}
			c.vectors = append(c.vectors, f)
		case schemapb.DataType_SparseFloatVector:
			if _, ok := params["dim"]; ok {
				return errInvalid("dim should not be specified for sparse vector field %s", f.GetName()), nil
			}
			c.vectors = append(c.vectors, f)
		case schemapb.DataType_Array:
			if _, err := strconv.Atoi(params["max_capacity"]); err != nil {
				return errInvalid("type param(max_capacity) should be specified for array field %s", f.GetName()), nil
			}
			switch f.GetElementType() {
			case schemapb.DataType_VarChar:
				if _, err := strconv.Atoi(params["max_length"]); err != nil {
					return errInvalid("type param(max_length) should be specified for varChar field(%s) of collection %s", f.GetName(), name), nil
				}
			case schemapb.DataType_Int64:
			default:
				return errInvalid("the fake supports arrays of VarChar or Int64, field %s has %s", f.GetName(), f.GetElementType()), nil
			}
		case schemapb.DataType_Int64, schemapb.DataType_Int32, schemapb.DataType_Int16, schemapb.DataType_Int8,
			schemapb.DataType_Double, schemapb.DataType_Float, schemapb.DataType_Bool:
		default:
			return errInvalid("the fake does not support field %s of type %s", f.GetName(), f.GetDataType()), nil
		}
		if f.GetIsPrimaryKey() {
			if c.pk != nil {
				return errInvalid("there are more than one primary key, field name = %s, %s", c.pk.GetName(), f.GetName()), nil
			}
			if t := f.GetDataType(); t != schemapb.DataType_Int64 && t != schemapb.DataType_VarChar {
				return errInvalid("the data type of primary key should be Int64 or VarChar"), nil
			}
			c.pk = f
		}
		if f.GetIsPartitionKey() {
			partitionKeys++
			if t := f.GetDataType(); t != schemapb.DataType_Int64 && t != schemapb.DataType_VarChar {
				return errInvalid("the data type of partition key should be Int64 or VarChar"), nil
			}
		}
	}
	switch {
	case c.pk == nil:
		return errInvalid("schema does not contain primary key, please specify the primary key"), nil
	case len(c.vectors) == 0:
		return errInvalid("schema does not contain vector field"), nil
	case len(c.vectors) > maxVectorFields:
		return errInvalid("maximum vector field's number should be limited to %d", maxVectorFields), nil
	case partitionKeys > 1:
		return errInvalid("there are more than one partition key"), nil
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.collections[name]; ok {
		if proto.Equal(stripIDs(old.schema), stripIDs(sch)) && old.consistency == c.consistency {
			return success(), nil
		}
		return errInvalid("create duplicate collection with different parameters, collection: %s", name), nil
	}
	for _, f := range sch.GetFields() {
		s.lastID++
		f.FieldID = 100 + s.lastID
	}
	s.lastID++
	c.id = s.lastID
	if partitionKeys > 0 && c.partitions == 0 {
		c.partitions = 16
	}
	s.collections[name] = c
	return success(), nil
}

// stripIDs returns a copy of a schema without field IDs and with its
// parameters sorted (clients send them in map order), for comparing a
// request with a stored collection.
func stripIDs(sch *schemapb.CollectionSchema) *schemapb.CollectionSchema {
	out := proto.Clone(sch).(*schemapb.CollectionSchema)
	byKey := func(a, b *commonpb.KeyValuePair) int { return strings.Compare(a.GetKey(), b.GetKey()) }
	for _, f := range out.GetFields() {
		f.FieldID = 0
		slices.SortFunc(f.TypeParams, byKey)
		slices.SortFunc(f.IndexParams, byKey)
	}
	slices.SortFunc(out.Properties, byKey)
	return out
}

func kv(pairs []*commonpb.KeyValuePair) map[string]string {
	m := map[string]string{}
	for _, p := range pairs {
		m[p.GetKey()] = p.GetValue()
	}
	return m
}

func pairs(m map[string]string) []*commonpb.KeyValuePair {
	var out []*commonpb.KeyValuePair
	for k, v := range m {
		out = append(out, &commonpb.KeyValuePair{Key: k, Value: v})
	}
	return out
}

// HasCollection implements milvuspb.MilvusServiceServer.
func (s *Server) HasCollection(ctx context.Context, req *milvuspb.HasCollectionRequest) (*milvuspb.BoolResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.collections[req.GetCollectionName()]
	return &milvuspb.BoolResponse{Status: success(), Value: ok}, nil
}

// DescribeCollection implements milvuspb.MilvusServiceServer.
func (s *Server) DescribeCollection(ctx context.Context, req *milvuspb.DescribeCollectionRequest) (*milvuspb.DescribeCollectionResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.collections[req.GetCollectionName()]
	if !ok {
		return &milvuspb.DescribeCollectionResponse{Status: errCollectionNotFound(req.GetCollectionName())}, nil
	}
	return &milvuspb.DescribeCollectionResponse{
		Status:           success(),
		Schema:           proto.Clone(c.schema).(*schemapb.CollectionSchema),
		CollectionID:     c.id,
		CollectionName:   c.schema.GetName(),
		ShardsNum:        c.shards,
		ConsistencyLevel: c.consistency,
		NumPartitions:    c.partitions,
		DbName:           "default",
	}, nil
}

// DropCollection implements milvuspb.MilvusServiceServer.
func (s *Server) DropCollection(ctx context.Context, req *milvuspb.DropCollectionRequest) (*commonpb.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.collections, req.GetCollectionName()) // Milvus succeeds on unknown collections too
	return success(), nil
}

// CreateIndex implements milvuspb.MilvusServiceServer for vector fields:
// float vectors take the dense index types with L2, IP or COSINE, sparse
// float vectors SPARSE_INVERTED_INDEX or SPARSE_WAND with IP, as in
// Milvus 2.4.
func (s *Server) CreateIndex(ctx context.Context, req *milvuspb.CreateIndexRequest) (*commonpb.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.collections[req.GetCollectionName()]
	if !ok {
		return errCollectionNotFound(req.GetCollectionName()), nil
	}
	f, ok := c.fields[req.GetFieldName()]
	if !ok {
		return errInvalid("cannot create index on non-exist field: %s", req.GetFieldName()), nil
	}
	if !slices.Contains(c.vectors, f) {
		return errInvalid("the fake supports indexes on vector fields only, not on %s", f.GetName()), nil
	}
	params := map[string]string{}
	for k, v := range kv(req.GetExtraParams()) {
		if k != "params" {
			params[k] = v
			continue
		}
		var nested map[string]any
		if err := json.Unmarshal([]byte(v), &nested); err != nil {
			return errInvalid("index params are not valid JSON: %s", v), nil
		}
		for nk, nv := range nested {
			params[nk] = fmt.Sprint(nv)
		}
	}
	sparse := f.GetDataType() == schemapb.DataType_SparseFloatVector
	switch params["index_type"] {
	case "FLAT", "IVF_FLAT", "IVF_SQ8", "IVF_PQ", "HNSW", "DISKANN", "AUTOINDEX", "SCANN":
		if sparse {
			return errInvalid("data type should be FloatVector, Float16Vector or BFloat16Vector"), nil
		}
	case "SPARSE_INVERTED_INDEX", "SPARSE_WAND":
		if !sparse {
			return errInvalid("only sparse float vector is supported for the specified index tpye"), nil
		}
	default:
		return errInvalid("invalid index type: %s", params["index_type"]), nil
	}
	if sparse {
		if params["metric_type"] == "" {
			params["metric_type"] = "IP"
		}
		if params["metric_type"] != "IP" {
			return errInvalid("metric type not found or not supported, supported: [IP]"), nil
		}
		if v, ok := params["drop_ratio_build"]; ok {
			if r, err := strconv.ParseFloat(v, 64); err != nil || r < 0 || r >= 1 {
				return errInvalid("invalid drop_ratio_build: %s, must be in range [0, 1)", v), nil
			}
		}
	} else {
		if params["metric_type"] == "" {
			params["metric_type"] = "COSINE"
		}
		switch params["metric_type"] {
		case "L2", "IP", "COSINE":
		default:
			return errInvalid("metric type %s not found or not supported, supported: [L2 IP COSINE]", params["metric_type"]), nil
		}
	}
	if params["index_type"] == "HNSW" {
		if m, err := strconv.Atoi(params["M"]); err != nil || m < 2 || m > 2048 {
			return errInvalid("param 'M' (%s) should be in range [2, 2048]", params["M"]), nil
		}
		if ef, err := strconv.Atoi(params["efConstruction"]); err != nil || ef < 1 {
			return errInvalid("param 'efConstruction' (%s) should be in range [1, 2147483647]", params["efConstruction"]), nil
		}
	}
	name := req.GetIndexName()
	if name == "" {
		name = f.GetName()
	}
	if old := c.indexes[f.GetName()]; old != nil {
		if maps.Equal(old.params, params) && old.name == name {
			return success(), nil
		}
		return errInvalid("CreateIndex failed: at most one distinct index is allowed per field"), nil
	}
	for _, other := range c.indexes {
		if other.name == name {
			return errInvalid("CreateIndex failed: index already exist, but parameters are inconsistent"), nil
		}
	}
	s.lastID++
	c.indexes[f.GetName()] = &index{id: s.lastID, name: name, field: f.GetName(), params: params}
	return success(), nil
}

// DescribeIndex implements milvuspb.MilvusServiceServer: the indexes of the
// field or with the name asked for, or all of them.
func (s *Server) DescribeIndex(ctx context.Context, req *milvuspb.DescribeIndexRequest) (*milvuspb.DescribeIndexResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.collections[req.GetCollectionName()]
	if !ok {
		return &milvuspb.DescribeIndexResponse{Status: errCollectionNotFound(req.GetCollectionName())}, nil
	}
	n := int64(len(c.rows))
	var out []*milvuspb.IndexDescription
	for _, f := range c.vectors {
		ix := c.indexes[f.GetName()]
		if ix == nil || (req.GetIndexName() != "" && req.GetIndexName() != ix.name) || (req.GetFieldName() != "" && req.GetFieldName() != ix.field) {
			continue
		}
		out = append(out, &milvuspb.IndexDescription{
			IndexName: ix.name, IndexID: ix.id, FieldName: ix.field, Params: pairs(ix.params),
			IndexedRows: n, TotalRows: n, State: commonpb.IndexState_Finished,
		})
	}
	if len(out) == 0 {
		return &milvuspb.DescribeIndexResponse{Status: errIndexNotFound(req.GetCollectionName())}, nil
	}
	return &milvuspb.DescribeIndexResponse{Status: success(), IndexDescriptions: out}, nil
}

// LoadCollection implements milvuspb.MilvusServiceServer. Loading is
// immediate, but like Milvus it needs an index on every vector field.
func (s *Server) LoadCollection(ctx context.Context, req *milvuspb.LoadCollectionRequest) (*commonpb.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.collections[req.GetCollectionName()]
	if !ok {
		return errCollectionNotFound(req.GetCollectionName()), nil
	}
	for _, f := range c.vectors {
		if c.indexes[f.GetName()] == nil {
			return failure(700, commonpb.ErrorCode_IndexNotExist, fmt.Sprintf("there is no vector index on field: [%s], please create index firstly: index not found[collection=%s]", f.GetName(), req.GetCollectionName())), nil
		}
	}
	c.loaded = true
	return success(), nil
}

// ReleaseCollection implements milvuspb.MilvusServiceServer.
func (s *Server) ReleaseCollection(ctx context.Context, req *milvuspb.ReleaseCollectionRequest) (*commonpb.Status, error) {
	if !s.Release(req.GetCollectionName()) {
		return errCollectionNotFound(req.GetCollectionName()), nil
	}
	return success(), nil
}

// GetLoadState implements milvuspb.MilvusServiceServer.
func (s *Server) GetLoadState(ctx context.Context, req *milvuspb.GetLoadStateRequest) (*milvuspb.GetLoadStateResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.collections[req.GetCollectionName()]
	switch {
	case !ok:
		return &milvuspb.GetLoadStateResponse{Status: errCollectionNotFound(req.GetCollectionName()), State: commonpb.LoadState_LoadStateNotExist}, nil
	case c.loaded:
		return &milvuspb.GetLoadStateResponse{Status: success(), State: commonpb.LoadState_LoadStateLoaded}, nil
	}
	return &milvuspb.GetLoadStateResponse{Status: success(), State: commonpb.LoadState_LoadStateNotLoad}, nil
}

// GetLoadingProgress implements milvuspb.MilvusServiceServer.
func (s *Server) GetLoadingProgress(ctx context.Context, req *milvuspb.GetLoadingProgressRequest) (*milvuspb.GetLoadingProgressResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.collections[req.GetCollectionName()]
	switch {
	case !ok:
		return &milvuspb.GetLoadingProgressResponse{Status: errCollectionNotFound(req.GetCollectionName())}, nil
	case !c.loaded:
		return &milvuspb.GetLoadingProgressResponse{Status: errCollectionNotLoaded(req.GetCollectionName())}, nil
	}
	return &milvuspb.GetLoadingProgressResponse{Status: success(), Progress: 100}, nil
}

// tick returns the next mutation timestamp. s.mu must be held.
func (s *Server) tick() uint64 {
	s.clock++
	return s.clock
}
