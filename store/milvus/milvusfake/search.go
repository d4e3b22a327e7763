package milvusfake

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/golang/protobuf/proto"
	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// sparseRow is one sparse float vector: strictly increasing indices and
// their values.
type sparseRow struct {
	idx []uint32
	val []float32
}

// parseSparseRow decodes a sparse row as the SDK encodes it (schemapb
// SparseFloatArray contents, and sparse placeholders): little-endian
// (uint32 index, float32 value) pairs. It checks the row as Milvus 2.4
// (before 2.4.12, which accepts empty rows) checks inserted rows.
func parseSparseRow(b []byte) (sparseRow, *commonpb.Status) {
	switch {
	case len(b) == 0:
		return sparseRow{}, errUnexpected("empty sparse float vector row")
	case len(b)%8 != 0:
		return sparseRow{}, errUnexpected("invalid data length in sparse float vector: %d", len(b))
	}
	v := sparseRow{idx: make([]uint32, len(b)/8), val: make([]float32, len(b)/8)}
	for i := range v.idx {
		v.idx[i] = binary.LittleEndian.Uint32(b[8*i:])
		v.val[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[8*i+4:]))
		switch x := float64(v.val[i]); {
		case v.idx[i] == math.MaxUint32:
			return sparseRow{}, errUnexpected("invalid index in sparse float vector: must be less than 2^32-1")
		case i > 0 && v.idx[i] <= v.idx[i-1]:
			return sparseRow{}, errUnexpected("unsorted or same indices in sparse float vector")
		case math.IsNaN(x):
			return sparseRow{}, errInvalid("value is NaN")
		case math.IsInf(x, 0):
			return sparseRow{}, errInvalid("value is infinity")
		}
	}
	return v, nil
}

func (v sparseRow) bytes() []byte {
	b := make([]byte, 0, 8*len(v.idx))
	for i, x := range v.idx {
		b = binary.LittleEndian.AppendUint32(b, x)
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v.val[i]))
	}
	return b
}

// matches reports whether an inverted index over row holds it under one
// of the query's terms: the two share an index where the row's value is
// not zero (Knowhere leaves zero values out of its posting lists). Only
// such rows are candidates of a sparse search.
func (v sparseRow) matches(q sparseRow) bool {
	i, j := 0, 0
	for i < len(v.idx) && j < len(q.idx) {
		switch {
		case v.idx[i] == q.idx[j]:
			if v.val[i] != 0 {
				return true
			}
			i++
			j++
		case v.idx[i] < q.idx[j]:
			i++
		default:
			j++
		}
	}
	return false
}

func (v sparseRow) dot(q sparseRow) float32 {
	var s float32
	i, j := 0, 0
	for i < len(v.idx) && j < len(q.idx) {
		switch {
		case v.idx[i] == q.idx[j]:
			s += v.val[i] * q.val[j]
			i++
			j++
		case v.idx[i] < q.idx[j]:
			i++
		default:
			j++
		}
	}
	return s
}

// segcoreType is the name segcore gives a vector data type in its errors.
func segcoreType(t int32) string {
	switch t {
	case int32(schemapb.DataType_FloatVector):
		return "VECTOR_FLOAT"
	case int32(schemapb.DataType_BinaryVector):
		return "VECTOR_BINARY"
	case int32(schemapb.DataType_Float16Vector):
		return "VECTOR_FLOAT16"
	case int32(schemapb.DataType_BFloat16Vector):
		return "VECTOR_BFLOAT16"
	case int32(schemapb.DataType_SparseFloatVector):
		return "VECTOR_SPARSE_FLOAT"
	}
	return fmt.Sprint(t)
}

// scored is one search hit.
type scored struct {
	r     row
	score float32
}

// searchOne runs one search request over c, exactly: its anns field (the
// only vector field when it names none), metric, parameters, placeholder
// and filter, checked as Milvus checks them. It returns the hits of each
// query, and the metric they are scored by.
//
// The rows an expression matches are kept until the next write
// (collection.filtered): sub-searches of one hybrid search, and searches
// between writes, filter once.
func (c *collection) searchOne(req *milvuspb.SearchRequest) ([][]scored, string, *commonpb.Status) {
	params := kv(req.GetSearchParams())
	name := params["anns_field"]
	if name == "" {
		if len(c.vectors) != 1 {
			return nil, "", errInvalid("multiple anns_fields exist, please specify a anns_field in search_params")
		}
		name = c.vectors[0].GetName()
	}
	f, ok := c.fields[name]
	if !ok || !slices.Contains(c.vectors, f) {
		return nil, "", errInvalid("failed to get field schema by name: fieldName(%s) not found", name)
	}
	ix := c.indexes[name]
	topk, err := strconv.Atoi(params["topk"])
	if err != nil || topk < 1 || topk > maxWindow {
		return nil, "", errInvalid("topk [%s] is invalid, it should be in range [1, %d]", params["topk"], maxWindow)
	}
	offset, _ := strconv.Atoi(params["offset"])
	metric := ix.metric()
	if m := params["metric_type"]; m != "" && m != metric {
		return nil, "", errInvalid("metric type not match[expected=%s][actual=%s]", metric, m)
	}
	var sp map[string]any
	if params["params"] != "" {
		if err := json.Unmarshal([]byte(params["params"]), &sp); err != nil {
			return nil, "", errInvalid("search params are not valid JSON: %s", params["params"])
		}
	}
	if ef, ok := sp["ef"].(float64); ok && ix.params["index_type"] == "HNSW" && int(ef) < topk+offset {
		return nil, "", errSegcore("ef(%d) should be larger than k(%d)", int(ef), topk+offset)
	}
	if r, ok := sp["drop_ratio_search"].(float64); ok && (r < 0 || r >= 1) {
		return nil, "", errInvalid("invalid drop_ratio_search: %v, must be in range [0, 1)", r)
	}

	var group commonpb.PlaceholderGroup
	if err := proto.Unmarshal(req.GetPlaceholderGroup(), &group); err != nil || len(group.GetPlaceholders()) != 1 {
		return nil, "", errInvalid("invalid placeholder group")
	}
	ph := group.GetPlaceholders()[0]
	if int32(ph.GetType()) != int32(f.GetDataType()) {
		return nil, "", errSegcore("vector type must be the same, field %s - type %s, search info type %s",
			name, segcoreType(int32(f.GetDataType())), segcoreType(int32(ph.GetType())))
	}
	if len(ph.GetValues()) == 0 {
		return nil, "", errInvalid("nq [0] is invalid, nq (number of search vector per search request) should be in range [1, 16384]")
	}
	sparse := f.GetDataType() == schemapb.DataType_SparseFloatVector
	var dense [][]float32
	var sparseQueries []sparseRow
	for _, b := range ph.GetValues() {
		if sparse {
			q, st := parseSparseRow(b)
			if st != nil {
				return nil, "", st
			}
			sparseQueries = append(sparseQueries, q)
			continue
		}
		dim := typeParam(f, "dim")
		if len(b) != dim*4 {
			return nil, "", errSegcore("vector dimension mismatch, expected vector size(byte) %d, actual %d.", dim*4, len(b))
		}
		q := make([]float32, dim)
		for i := range q {
			q[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[i*4:]))
		}
		dense = append(dense, q)
	}
	e, st := c.plan(req.GetDsl())
	if st != nil {
		return nil, "", st
	}

	candidates, seen := c.filtered[req.GetDsl()]
	if !seen {
		candidates = c.matchingUnordered(e)
		if c.filtered == nil || len(c.filtered) >= maxFiltered {
			c.filtered = map[string][]row{}
		}
		c.filtered[req.GetDsl()] = candidates
	}
	pk := c.pk.GetName()
	var out [][]scored
	for qi := range max(len(dense), len(sparseQueries)) {
		type keyed struct {
			scored
			key any
		}
		var qnorm float32
		if !sparse {
			qnorm = dot32(dense[qi], dense[qi])
		}
		// Rows are scored in parallel chunks, as Milvus scores segments.
		scoreRows := func(rows []row) []keyed {
			var hits []keyed
			for _, r := range rows {
				if sparse {
					v := r[name].(sparseRow)
					if v.matches(sparseQueries[qi]) {
						hits = append(hits, keyed{scored{r, v.dot(sparseQueries[qi])}, r[pk]})
					}
					continue
				}
				hits = append(hits, keyed{scored{r, scoreNorm(metric, dense[qi], qnorm, r[name].([]float32))}, r[pk]})
			}
			return hits
		}
		var hits []keyed
		if chunks := min(runtime.GOMAXPROCS(0), len(candidates)/scanChunk); chunks > 1 {
			parts := make([][]keyed, chunks)
			var wg sync.WaitGroup
			for i := range chunks {
				wg.Go(func() {
					parts[i] = scoreRows(candidates[i*len(candidates)/chunks : (i+1)*len(candidates)/chunks])
				})
			}
			wg.Wait()
			for _, p := range parts {
				hits = append(hits, p...)
			}
		} else {
			hits = scoreRows(candidates)
		}
		better := func(a, b keyed) int { // ties in key order
			c := cmp.Compare(b.score, a.score)
			if metric == "L2" {
				c = -c
			}
			if c != 0 {
				return c
			}
			return comparePK(a.key, b.key)
		}
		hits = best(hits, topk+offset, better)
		hits = hits[min(offset, len(hits)):]
		top := make([]scored, min(topk, len(hits)))
		for i := range top {
			top[i] = hits[i].scored
		}
		out = append(out, top)
	}
	return out, metric, nil
}

// Search implements milvuspb.MilvusServiceServer with an exact scan.
func (s *Server) Search(ctx context.Context, req *milvuspb.SearchRequest) (*milvuspb.SearchResults, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(st *commonpb.Status) (*milvuspb.SearchResults, error) {
		return &milvuspb.SearchResults{Status: st}, nil
	}
	c, ok := s.collections[req.GetCollectionName()]
	if !ok {
		return fail(errCollectionNotFound(req.GetCollectionName()))
	}
	if !c.loaded {
		return fail(errCollectionNotLoaded(req.GetCollectionName()))
	}
	fields, st := c.outputFields(req.GetOutputFields(), false)
	if st != nil {
		return fail(st)
	}
	perQuery, _, st := c.searchOne(req)
	if st != nil {
		return fail(st)
	}
	topk, _ := strconv.Atoi(kv(req.GetSearchParams())["topk"])
	return c.results(req.GetCollectionName(), perQuery, int64(topk), fields), nil
}

// results lays hits out as Milvus returns them: per query its count, then
// flat scores, primary keys and the output fields of every hit.
func (c *collection) results(name string, perQuery [][]scored, topk int64, fields []*schemapb.FieldSchema) *milvuspb.SearchResults {
	res := &schemapb.SearchResultData{NumQueries: int64(len(perQuery)), TopK: topk}
	var rows []row
	var keys []any
	for _, hits := range perQuery {
		res.Topks = append(res.Topks, int64(len(hits)))
		for _, h := range hits {
			res.Scores = append(res.Scores, h.score)
			keys = append(keys, h.r[c.pk.GetName()])
			rows = append(rows, h.r)
		}
	}
	res.Ids = c.ids(keys)
	for _, f := range fields {
		res.FieldsData = append(res.FieldsData, encodeColumn(f, rows))
		res.OutputFields = append(res.OutputFields, f.GetName())
	}
	return &milvuspb.SearchResults{Status: success(), Results: res, CollectionName: name}
}

// score is Milvus' score for a metric: similarity for COSINE and IP
// (higher is closer), squared distance for L2 (lower is closer).
func score(metric string, q, v []float32) float32 {
	return scoreNorm(metric, q, dot32(q, q), v)
}

// scoreNorm is score with the query's squared norm nq computed once.
func scoreNorm(metric string, q []float32, nq float32, v []float32) float32 {
	// In float32, as Milvus's engine computes.
	switch metric {
	case "IP":
		return dot32(q, v)
	case "L2":
		var l2 float32
		for i := range q {
			d := q[i] - v[i]
			l2 += d * d
		}
		return l2
	}
	qv, nv := dotNorm32(q, v)
	if nq == 0 || nv == 0 {
		return 0
	}
	return qv / float32(math.Sqrt(float64(nq)*float64(nv)))
}

// dot32 is the inner product of two vectors of one length.
func dot32(a, b []float32) float32 {
	ab, _ := dotNorm32(a, b)
	return ab
}

// dotNorm32 is the inner product of q and v, of one length, and v's
// squared norm, in one pass. Four partial sums a side, as a vector unit
// keeps them (Milvus' engine sums in SIMD lanes too): one running sum
// waits on its last addition at every element, and made a scan of 10,000
// vectors of 384 dimensions cost 10 ms, which competed with the store for
// the CPU in benchmarks of recall.
func dotNorm32(q, v []float32) (qv, vv float32) {
	v = v[:len(q)]
	var a0, a1, a2, a3, b0, b1, b2, b3 float32
	i := 0
	for ; i+4 <= len(q); i += 4 {
		a0 += q[i] * v[i]
		a1 += q[i+1] * v[i+1]
		a2 += q[i+2] * v[i+2]
		a3 += q[i+3] * v[i+3]
		b0 += v[i] * v[i]
		b1 += v[i+1] * v[i+1]
		b2 += v[i+2] * v[i+2]
		b3 += v[i+3] * v[i+3]
	}
	for ; i < len(q); i++ {
		a0 += q[i] * v[i]
		b0 += v[i] * v[i]
	}
	return (a0 + a1) + (a2 + a3), (b0 + b1) + (b2 + b3)
}

// best returns the n first of xs in the order cmp defines, sorted. It
// keeps a max-heap of the n best seen (the worst of them at its root), so
// a search of many rows costs O(rows·log n), not a sort of every row.
func best[T any](xs []T, n int, cmp func(a, b T) int) []T {
	if n <= 0 {
		return nil
	}
	if len(xs) <= n {
		slices.SortFunc(xs, cmp)
		return xs
	}
	h := slices.Clone(xs[:n])
	down := func(i int) {
		for {
			l, worst := 2*i+1, i
			if l < n && cmp(h[l], h[worst]) > 0 {
				worst = l
			}
			if r := l + 1; r < n && cmp(h[r], h[worst]) > 0 {
				worst = r
			}
			if worst == i {
				return
			}
			h[i], h[worst] = h[worst], h[i]
			i = worst
		}
	}
	for i := n/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, x := range xs[n:] {
		if cmp(x, h[0]) < 0 {
			h[0] = x
			down(0)
		}
	}
	slices.SortFunc(h, cmp)
	return h
}

// maxFiltered bounds the expressions a collection keeps matched rows for.
const maxFiltered = 64

// scanChunk is the fewest rows a search scores on one goroutine.
const scanChunk = 2048

// Hybrid search limits and defaults of Milvus 2.4.
const (
	maxSearchRequests = 1024
	defaultRRFK       = 60
	maxRRFK           = 16384
)

// rescorer turns a sub-search hit's rank (1-based) and score into its
// share of the fused score.
type rescorer func(rank int, score float32) float32

// rescorers parses the rank parameters the SDK sends (strategy, and params
// as JSON holding k for rrf or weights for weighted) into one rescorer per
// sub-search, whose hits are scored by metrics[i], as Milvus 2.4's
// NewReScorer does. Without a strategy, Milvus fuses by rrf with k = 60.
func rescorers(params map[string]string, metrics []string) ([]rescorer, *commonpb.Status) {
	out := make([]rescorer, len(metrics))
	rrf := func(k float32) {
		for i := range out {
			out[i] = func(rank int, _ float32) float32 { return 1 / (k + float32(rank)) }
		}
	}
	strategy, ok := params["strategy"]
	if !ok {
		rrf(defaultRRFK)
		return out, nil
	}
	if strategy != "rrf" && strategy != "weighted" {
		return nil, errUnexpected("unsupported rank type %s", strategy)
	}
	raw, ok := params["params"]
	if !ok {
		return nil, errUnexpected("params not found in rank_params")
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return nil, errUnexpected("%v", err)
	}
	if strategy == "rrf" {
		v, ok := p["k"]
		if !ok {
			return nil, errUnexpected("k not found in rank_params")
		}
		k, ok := v.(float64)
		if !ok {
			return nil, errUnexpected("The type of rank param k should be float")
		}
		if k <= 0 || k >= maxRRFK {
			return nil, errUnexpected("The rank params k should be in range (0, %d)", maxRRFK)
		}
		rrf(float32(k))
		return out, nil
	}
	v, ok := p["weights"]
	if !ok {
		return nil, errUnexpected("weights not found in rank_params")
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errUnexpected("The weights param should be an array")
	}
	var weights []float32
	for _, x := range list {
		w, ok := x.(float64)
		if !ok {
			return nil, errUnexpected("The type of rank param weight should be float")
		}
		if w < 0 || w > 1 {
			return nil, errUnexpected("rank param weight should be in range [0, 1]")
		}
		weights = append(weights, float32(w))
	}
	if len(weights) != len(metrics) {
		return nil, failure(1100, commonpb.ErrorCode_IllegalArgument, fmt.Sprintf(
			"the length of weights param mismatch with ann search requests: invalid parameter[expected=%d][actual=%d]", len(metrics), len(weights)))
	}
	for i := range out {
		w, norm := weights[i], normalizer(metrics[i])
		out[i] = func(_ int, score float32) float32 { return w * norm(score) }
	}
	return out, nil
}

// normalizer is how Milvus' weighted reranker squashes a metric's scores
// into [0, 1] before weighting them: (1+s)/2 for COSINE, 1/2 + atan(s)/π
// for IP, 1 - 2·atan(s)/π for L2 (a distance).
func normalizer(metric string) func(float32) float32 {
	switch metric {
	case "COSINE":
		return func(s float32) float32 { return (1 + s) * 0.5 }
	case "IP":
		return func(s float32) float32 { return 0.5 + float32(math.Atan(float64(s)))/math.Pi }
	}
	return func(s float32) float32 { return 1 - 2*float32(math.Atan(float64(s)))/math.Pi }
}

// HybridSearch implements milvuspb.MilvusServiceServer as Milvus 2.4 does:
// every sub-search (one query vector each) runs on its own, each hit is
// rescored by the reranker, the scores of a primary key are summed, and
// the best limit after offset are returned, ties by primary key, rounded
// to round_decimal, with the output fields.
func (s *Server) HybridSearch(ctx context.Context, req *milvuspb.HybridSearchRequest) (*milvuspb.SearchResults, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(st *commonpb.Status) (*milvuspb.SearchResults, error) {
		return &milvuspb.SearchResults{Status: st}, nil
	}
	c, ok := s.collections[req.GetCollectionName()]
	if !ok {
		return fail(errCollectionNotFound(req.GetCollectionName()))
	}
	subs := req.GetRequests()
	switch {
	case len(subs) == 0:
		return fail(errUnexpected("minimum of ann search requests is 1"))
	case len(subs) > maxSearchRequests:
		return fail(errUnexpected("maximum of ann search requests is %d", maxSearchRequests))
	}
	for _, sub := range subs {
		var group commonpb.PlaceholderGroup
		if err := proto.Unmarshal(sub.GetPlaceholderGroup(), &group); err != nil || len(group.GetPlaceholders()) != 1 {
			return fail(errInvalid("invalid placeholder group"))
		}
		if nq := len(group.GetPlaceholders()[0].GetValues()); nq != 1 {
			return fail(failure(1100, commonpb.ErrorCode_IllegalArgument, fmt.Sprintf("nq should be equal to 1: invalid parameter[expected=1][actual=%d]", nq)))
		}
	}
	if req.GetPartitionNames() != nil && c.partitionKey() != nil {
		return fail(errUnexpected("not support manually specifying the partition names if partition key mode is used"))
	}
	fields, st := c.outputFields(req.GetOutputFields(), false)
	if st != nil {
		return fail(st)
	}
	if !c.loaded {
		return fail(errCollectionNotLoaded(req.GetCollectionName()))
	}
	results := make([][]scored, len(subs))
	metrics := make([]string, len(subs))
	for i, sub := range subs {
		perQuery, metric, st := c.searchOne(sub)
		if st != nil {
			return fail(st)
		}
		results[i], metrics[i] = perQuery[0], metric
	}
	params := kv(req.GetRankParams())
	rescore, st := rescorers(params, metrics)
	if st != nil {
		return fail(st)
	}
	limit, err := strconv.ParseInt(params["limit"], 0, 64)
	switch {
	case params["limit"] == "":
		return fail(errUnexpected("limit not found in rank_params"))
	case err != nil:
		return fail(errUnexpected("limit [%s] is invalid", params["limit"]))
	}
	var offset int64
	if v, ok := params["offset"]; ok {
		if offset, err = strconv.ParseInt(v, 0, 64); err != nil {
			return fail(errUnexpected("offset [%s] is invalid", v))
		}
	}
	if limit+offset < 1 || limit+offset > maxWindow {
		return fail(errUnexpected("invalid max query result window, (offset+limit) should be in range [1, %d], but got %d", maxWindow, limit+offset))
	}
	round := int64(-1)
	if v, ok := params["round_decimal"]; ok {
		if round, err = strconv.ParseInt(v, 0, 64); err != nil || round != -1 && (round < 0 || round > 6) {
			return fail(errUnexpected("round_decimal [%s] is invalid, should be -1 or an integer in range [0, 6]", v))
		}
	}

	fused := map[any]*scored{}
	pk := c.pk.GetName()
	for i, hits := range results {
		for rank, h := range hits {
			k := h.r[pk]
			if fused[k] == nil {
				fused[k] = &scored{r: h.r}
			}
			fused[k].score += rescore[i](rank+1, h.score)
		}
	}
	var all []scored
	for _, h := range fused {
		all = append(all, *h)
	}
	slices.SortFunc(all, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return comparePK(a.r[pk], b.r[pk])
	})
	all = all[min(int(offset), len(all)):]
	all = all[:min(int(limit), len(all))]
	if round != -1 {
		m := math.Pow(10, float64(round))
		for i := range all {
			all[i].score = float32(math.Floor(float64(all[i].score)*m+0.5) / m)
		}
	}
	return c.results(req.GetCollectionName(), [][]scored{all}, limit, fields), nil
}
