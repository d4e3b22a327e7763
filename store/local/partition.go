package local

import (
	"cmp"
	"hash/fnv"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/hindsight-memory/hindsight/memory"
)

// arena holds a partition's raw vectors by node number, with their inverse
// norms. Vectors are kept as given, so Get returns them bit for bit;
// similarities scale by the inverse norms instead. Next to each vector it
// keeps the unit vector quantized to bytes (quantize), which the graph
// navigates by; exact scores always come from the float32 vectors.
type arena struct {
	dim    int
	chunks [][]float32 // arenaChunk vectors each; the last one grows by append
	inv    []float32
	codes  [][]int8 // quantized unit vectors, chunked like chunks
	scale  []float32
	l1     []float32 // L1 norms of the unit vectors, for error bounds
}

const arenaChunk = 1024

func (a *arena) len() int { return len(a.inv) }

func (a *arena) add(v []float32) uint32 {
	i := len(a.inv)
	if i%arenaChunk == 0 {
		a.chunks = append(a.chunks, nil)
		a.codes = append(a.codes, nil)
	}
	last := len(a.chunks) - 1
	a.chunks[last] = append(a.chunks[last], v...)
	inv := invNorm(v)
	a.inv = append(a.inv, inv)
	var scale float32
	a.codes[last], scale = quantize(v, inv, a.codes[last])
	a.scale = append(a.scale, scale)
	a.l1 = append(a.l1, l1(v)*inv)
	return uint32(i)
}

// code returns the quantized unit vector of node i.
func (a *arena) code(i uint32) []int8 {
	c := a.codes[i/arenaChunk]
	off := int(i%arenaChunk) * a.dim
	return c[off : off+a.dim : off+a.dim]
}

func (a *arena) at(i uint32) []float32 {
	c := a.chunks[i/arenaChunk]
	off := int(i%arenaChunk) * a.dim
	return c[off : off+a.dim : off+a.dim]
}

// prefetch starts loading node i's quantized vector into the cache.
func (a *arena) prefetch(i uint32) {
	c := a.code(i)
	prefetchBytes(&c[0], (len(c)+63)/64)
}

// score is the exact cosine similarity of a unit query and node i.
func (a *arena) score(q []float32, i uint32) float32 {
	return dot(q, a.at(i)) * a.inv[i]
}

// codes interns the values of a low-cardinality field (kind, status) so
// that a filter can reject most nodes by a byte compare, and counts live
// nodes per value to estimate how selective a filter is. Past 255 values
// everything else shares code otherCode, which the prefilter lets through.
type codes struct {
	byName map[string]uint8
	count  []int // live nodes per code
}

const otherCode = 255

func newCodes() codes { return codes{byName: map[string]uint8{}, count: make([]int, 256)} }

func (c *codes) code(v string) uint8 {
	if k, ok := c.byName[v]; ok {
		return k
	}
	if len(c.byName) >= otherCode {
		return otherCode
	}
	k := uint8(len(c.byName))
	c.byName[v] = k
	return k
}

// allowed returns the codes a filter list admits, and how many live nodes
// carry them; an empty list admits everything.
func (c *codes) allowed(values []string, nLive int) (*[256]bool, int) {
	var ok [256]bool
	if len(values) == 0 {
		for i := range ok {
			ok[i] = true
		}
		return &ok, nLive
	}
	n := 0
	for _, v := range values {
		if k, found := c.byName[v]; found && !ok[k] {
			ok[k] = true
			n += c.count[k]
		}
	}
	if !ok[otherCode] {
		ok[otherCode] = true
		n += c.count[otherCode]
	}
	return &ok, n
}

// state is the content of one partition: its documents, vectors and graph.
// A compaction builds a new state and swaps it in whole.
type state struct {
	vecs     *arena
	docs     []memory.VectorDoc // by node, without dense vectors (sparse ones kept); zero for tombstones
	live     []bool
	kind     []uint8
	status   []uint8
	scope    []uint8
	created  []int64 // CreatedAt in Unix seconds
	byID     map[string]uint32
	nLive    int
	kinds    codes
	statuses codes
	scopes   codes
	graph    *graph

	sortMu sync.Mutex
	sorted []string // live IDs in order; nil when stale
}

func newState(dim int, hp HNSWConfig, tenant string) *state {
	h := fnv.New64a()
	h.Write([]byte(tenant))
	vecs := &arena{dim: dim}
	return &state{
		vecs: vecs, byID: map[string]uint32{}, kinds: newCodes(), statuses: newCodes(), scopes: newCodes(),
		graph: newGraph(vecs, hp.M, hp.EfConstruction, h.Sum64()),
	}
}

func (st *state) isLive(i uint32) bool { return st.live[i] }

func (st *state) tombstones() int { return len(st.live) - st.nLive }

// upsert applies documents of this partition's tenant, in order, and
// returns the new nodes, which the caller links with linkNodes. A document
// whose vector is unchanged is updated in place (status, confidence and
// decay change far more often than content); a changed vector tombstones
// the old node and adds a new one.
func (st *state) upsert(docs []memory.VectorDoc) []uint32 {
	var added []uint32
	for _, d := range docs {
		if i, ok := st.byID[d.ID]; ok {
			if slices.Equal(st.vecs.at(i), d.Vector) {
				st.setDoc(i, d)
				continue
			}
			st.remove(i)
		}
		i := st.vecs.add(d.Vector)
		st.addSlot()
		st.setDoc(i, d)
		st.live[i] = true
		st.byID[d.ID] = i
		st.nLive++
		st.graph.addNode(i)
		added = append(added, i)
		st.sorted = nil
	}
	return added
}

// addSlot adds a tombstoned node's fields, for the node just added to
// the vectors.
func (st *state) addSlot() {
	st.docs = append(st.docs, memory.VectorDoc{})
	st.live = append(st.live, false)
	st.kind = append(st.kind, 0)
	st.status = append(st.status, 0)
	st.scope = append(st.scope, 0)
	st.created = append(st.created, 0)
}

// setDoc stores d's scalar fields at node i, keeping the counts right.
func (st *state) setDoc(i uint32, d memory.VectorDoc) {
	if st.live[i] {
		st.kinds.count[st.kind[i]]--
		st.statuses.count[st.status[i]]--
		st.scopes.count[st.scope[i]]--
	}
	d.Vector = nil
	d.Entities = slices.Clone(d.Entities)
	d.Sparse = d.Sparse.Clone()
	st.docs[i] = d
	st.kind[i] = st.kinds.code(string(d.Kind))
	st.status[i] = st.statuses.code(d.Status)
	st.scope[i] = st.scopes.code(string(d.Scope.Norm()))
	st.created[i] = d.CreatedAt.Unix()
	st.kinds.count[st.kind[i]]++
	st.statuses.count[st.status[i]]++
	st.scopes.count[st.scope[i]]++
}

func (st *state) linkNodes(nodes []uint32, workers int) {
	st.graph.linkBatch(nodes, workers, st.isLive)
}

// remove tombstones node i.
func (st *state) remove(i uint32) {
	st.kinds.count[st.kind[i]]--
	st.statuses.count[st.status[i]]--
	st.scopes.count[st.scope[i]]--
	delete(st.byID, st.docs[i].ID)
	st.docs[i] = memory.VectorDoc{}
	st.live[i] = false
	st.nLive--
	st.sorted = nil
}

// delete removes documents by ID and reports how many existed.
func (st *state) delete(ids []string) int {
	n := 0
	for _, id := range ids {
		if i, ok := st.byID[id]; ok {
			st.remove(i)
			n++
		}
	}
	return n
}

// compacted returns a new state holding only the live documents, with a
// graph built afresh, or nil when tombstones are too few to bother: under
// a quarter of the nodes, or 64.
func (st *state) compacted(dim int, hp HNSWConfig, tenant string, workers int) *state {
	if t := st.tombstones(); t < 64 || t < len(st.live)/4 {
		return nil
	}
	fresh := newState(dim, hp, tenant)
	docs := make([]memory.VectorDoc, 0, st.nLive)
	for i, live := range st.live {
		if live {
			d := st.docs[i]
			d.Vector = st.vecs.at(uint32(i))
			docs = append(docs, d)
		}
	}
	fresh.linkNodes(fresh.upsert(docs), workers)
	return fresh
}

// get returns a copy of the live document with this ID, with its vector.
func (st *state) get(id string) (memory.VectorDoc, bool) {
	i, ok := st.byID[id]
	if !ok {
		return memory.VectorDoc{}, false
	}
	d := st.docs[i]
	d.Vector = slices.Clone(st.vecs.at(i))
	d.Entities = slices.Clone(d.Entities)
	d.Sparse = d.Sparse.Clone()
	return d, true
}

// prefilter is the byte-compare part of a filter, checked before Match:
// kind, status and scope by their codes, the creation range by the
// column of creation seconds.
type prefilter struct {
	kinds, statuses, scopes *[256]bool
	created                 memory.Seconds
	// estimate is how many live nodes the filter may admit: kind, status
	// and scope counted as independent, the creation range counted.
	estimate int
	// residual is set when the filter restricts more than the codes and
	// the creation seconds settle.
	residual bool
}

func (st *state) prefilter(f memory.VectorFilter) prefilter {
	kinds := make([]string, len(f.Kinds))
	for i, k := range f.Kinds {
		kinds[i] = string(k)
	}
	scopes := make([]string, len(f.Scopes))
	for i, sc := range f.Scopes {
		scopes[i] = string(sc.Norm())
	}
	pf := prefilter{created: f.Seconds()}
	var kn, sn, cn int
	pf.kinds, kn = st.kinds.allowed(kinds, st.nLive)
	pf.statuses, sn = st.statuses.allowed(f.Statuses, st.nLive)
	pf.scopes, cn = st.scopes.allowed(scopes, st.nLive)
	if st.nLive > 0 {
		est := float64(kn) * float64(sn) / float64(st.nLive) * float64(cn) / float64(st.nLive)
		if pf.created.Bounded() {
			// A time range can admit almost nothing (a day with no
			// memories): counting it costs a pass over one column, where
			// a graph search would look for what is not there first.
			in := 0
			for i, t := range st.created {
				if st.live[i] && pf.created.Holds(t) {
					in++
				}
			}
			est = est * float64(in) / float64(st.nLive)
		}
		pf.estimate = int(math.Ceil(est))
	}
	// The seconds at the creation range's bounds are left to Match, in
	// accepts.
	pf.residual = f.TaskType != "" || f.MinConfidence > 0 || len(f.Entities) > 0
	return pf
}

// accepts reports whether live node i passes f, as f.Match would. The
// partition is f's tenant, so tenant, kind, status and scope are settled
// by byte compares and most of a creation range by the seconds column;
// Match runs only for the other fields, or for values past the interning
// limit.
func (st *state) accepts(i uint32, pf prefilter, f *memory.VectorFilter) bool {
	if !st.live[i] || !pf.kinds[st.kind[i]] || !pf.statuses[st.status[i]] || !pf.scopes[st.scope[i]] || !pf.created.Holds(st.created[i]) {
		return false
	}
	if !pf.residual && st.kind[i] != otherCode && st.status[i] != otherCode && st.scope[i] != otherCode && pf.created.Inside(st.created[i]) {
		return true
	}
	return f.Match(st.docs[i])
}

// searchParams are the knobs of a search.
type searchParams struct {
	exactThreshold int
	ef             int
	stats          *searchStats
}

// searchStats counts how searches were answered, for tests and benchmarks.
type searchStats struct {
	exact, graph, fallback atomic.Int64
}

// search returns up to k hits (all for k < 0) for the unit query q. It
// scans exactly when the partition is small, or when the filter's estimated
// matches are few; otherwise it searches the graph, and falls back to a scan
// when the filter turns out much more selective than estimated.
func (st *state) search(q []float32, f memory.VectorFilter, k int, sp searchParams) []memory.VectorHit {
	if k == 0 {
		return []memory.VectorHit{}
	}
	pf := st.prefilter(f)
	if k < 0 || st.nLive <= sp.exactThreshold || pf.estimate <= sp.exactThreshold {
		sp.stats.exact.Add(1)
		return st.exact(q, f, pf, k)
	}
	// A graph search visits in the order of ef·M0 nodes, divided by the
	// share of nodes the filter accepts. Past a few times that (the filter
	// is more selective than kind and status suggest) and past a quarter of
	// the partition, scanning is cheaper.
	ef := max(sp.ef, k)
	share := float64(max(pf.estimate, 1)) / float64(st.nLive)
	budget := max(len(st.live)/4, int(8*float64(ef*st.graph.m0)/share))
	found, complete := st.graph.search(q, ef, func(i uint32) bool { return st.accepts(i, pf, &f) }, budget)
	if !complete {
		sp.stats.fallback.Add(1)
		return st.exact(q, f, pf, k)
	}
	sp.stats.graph.Add(1)
	// The graph ranks by quantized vectors; the ef candidates are scored
	// exactly, which fixes both the order and the reported similarity.
	hits := make([]memory.VectorHit, 0, len(found))
	for _, c := range found {
		hits = append(hits, st.hit(c.id, st.vecs.score(q, c.id)))
	}
	memory.SortHits(hits)
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

// hit returns node i as a hit, without its vectors.
func (st *state) hit(i uint32, score float32) memory.VectorHit {
	d := st.docs[i]
	d.Entities = slices.Clone(d.Entities)
	d.Sparse = memory.SparseVector{}
	return memory.VectorHit{Doc: d, Score: float64(score)}
}

// exact returns the best k nodes that pass the filter (all for k < 0),
// exactly: the same set and order as scoring every one in float32.
//
// It first scores them from the quantized vectors, a quarter of the memory
// to read, with a bound on each score's error (errorBound), and then
// rescores in float32 only the nodes whose best possible score reaches the
// k-th best worst possible score: no node outside that set can be in the
// top k.
func (st *state) exact(q []float32, f memory.VectorFilter, pf prefilter, k int) []memory.VectorHit {
	var nodes []uint32
	for n := range st.live {
		if st.accepts(uint32(n), pf, &f) {
			nodes = append(nodes, uint32(n))
		}
	}
	if k >= 0 && len(nodes) > k {
		qq := newQuery(q)
		ql1 := l1(q)
		type approx struct {
			i      uint32
			hi, lo float32
		}
		cands := make([]approx, len(nodes))
		var lows lowHeap // the k best lower bounds
		for j, i := range nodes {
			if j+4 < len(nodes) {
				st.vecs.prefetch(nodes[j+4])
			}
			s := float32(dotInt8(qq.codes, st.vecs.code(i))) * qq.scale * st.vecs.scale[i]
			e := errorBound(qq.scale, ql1, st.vecs.scale[i], st.vecs.l1[i], len(q))
			cands[j] = approx{i, s + e, s - e}
			lows.offer(s-e, k)
		}
		floor := lows[0]
		nodes = nodes[:0]
		for _, c := range cands {
			if c.hi >= floor {
				nodes = append(nodes, c.i)
			}
		}
	}
	return st.topExact(q, nodes, k)
}

// errorBound bounds |quantized - exact| cosine of a query (scale sq, unit
// L1 norm lq) and a node (scale sn, unit L1 norm ln). Each component of a
// unit vector is its code times the scale, off by at most half the scale;
// expanding the product of two such sums gives
// (sn·lq + sq·ln)/2 + 3/4·dim·sq·sn. A little more covers float32 rounding.
func errorBound(sq, lq, sn, ln float32, dim int) float32 {
	return (sn*lq+sq*ln)/2 + 0.75*float32(dim)*sq*sn + 1e-4
}

func l1(v []float32) float32 {
	var s float32
	for _, x := range v {
		s += float32(math.Abs(float64(x)))
	}
	return s
}

// lowHeap keeps the k largest values offered, smallest first.
type lowHeap []float32

func (h *lowHeap) offer(v float32, k int) {
	s := *h
	switch {
	case len(s) < k:
		s = append(s, v)
		for j := len(s) - 1; j > 0 && s[j] < s[(j-1)/2]; j = (j - 1) / 2 {
			s[j], s[(j-1)/2] = s[(j-1)/2], s[j]
		}
	case v > s[0]:
		s[0] = v
		for i := 0; ; {
			l, r, m := 2*i+1, 2*i+2, i
			if l < len(s) && s[l] < s[m] {
				m = l
			}
			if r < len(s) && s[r] < s[m] {
				m = r
			}
			if m == i {
				break
			}
			s[i], s[m] = s[m], s[i]
			i = m
		}
	}
	*h = s
}

// topExact scores nodes in float32 and returns the best k (all for k < 0)
// ordered like memory.SortHits.
func (st *state) topExact(q []float32, nodes []uint32, k int) []memory.VectorHit {
	type scored struct {
		i     uint32
		score float32
	}
	worse := func(a, b scored) bool { // a ranks below b
		if a.score != b.score {
			return a.score < b.score
		}
		return st.docs[a.i].ID > st.docs[b.i].ID
	}
	var top []scored // a min-heap by rank when k >= 0
	down := func(i int) {
		for {
			l, r, m := 2*i+1, 2*i+2, i
			if l < len(top) && worse(top[l], top[m]) {
				m = l
			}
			if r < len(top) && worse(top[r], top[m]) {
				m = r
			}
			if m == i {
				return
			}
			top[i], top[m] = top[m], top[i]
			i = m
		}
	}
	for _, i := range nodes {
		s := scored{i, st.vecs.score(q, i)}
		switch {
		case k < 0 || len(top) < k:
			top = append(top, s)
			if k >= 0 {
				for j := len(top) - 1; j > 0 && worse(top[j], top[(j-1)/2]); j = (j - 1) / 2 {
					top[j], top[(j-1)/2] = top[(j-1)/2], top[j]
				}
			}
		case worse(top[0], s):
			top[0] = s
			down(0)
		}
	}
	hits := make([]memory.VectorHit, len(top))
	for j, s := range top {
		hits[j] = st.hit(s.i, s.score)
	}
	memory.SortHits(hits)
	return hits
}

// sortedIDs returns the live IDs in order, building the list on first use
// after a change. Readers share the partition's read lock, so the list has
// its own mutex.
func (st *state) sortedIDs() []string {
	st.sortMu.Lock()
	defer st.sortMu.Unlock()
	if st.sorted == nil {
		st.sorted = make([]string, 0, st.nLive)
		for id := range st.byID {
			st.sorted = append(st.sorted, id)
		}
		slices.Sort(st.sorted)
	}
	return st.sorted
}

// list pages through matching documents in ID order after afterID.
func (st *state) list(f memory.VectorFilter, afterID string, limit int) []memory.VectorDoc {
	ids := st.sortedIDs()
	start, found := slices.BinarySearch(ids, afterID)
	if found {
		start++
	}
	pf := st.prefilter(f)
	out := []memory.VectorDoc{}
	for _, id := range ids[start:] {
		i := st.byID[id]
		if !st.accepts(i, pf, &f) {
			continue
		}
		out = append(out, st.hit(i, 0).Doc)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}

// partition is the documents of one tenant in one collection.
//
// Locking: writers take writeMu for the whole write (log append, fsync,
// apply), which orders a partition's log records exactly as they are
// applied, and take mu only while applying, so searches wait only for the
// in-memory update, never for the disk. A checkpoint holds writeMu alone
// while it writes the snapshot: writers wait, readers do not.
type partition struct {
	coll   memory.Collection
	tenant string

	writeMu    sync.Mutex
	lastLSN    uint64 // of the last record applied; guarded by writeMu
	durableLSN uint64 // of the last record in the snapshot; guarded by writeMu

	mu sync.RWMutex
	st *state
}

type partitionKey struct {
	coll   memory.Collection
	tenant string
}

func comparePartitions(a, b *partition) int {
	if c := cmp.Compare(a.coll, b.coll); c != 0 {
		return c
	}
	return cmp.Compare(a.tenant, b.tenant)
}
