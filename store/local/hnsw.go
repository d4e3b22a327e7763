package local

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// graph is a hierarchical navigable small world graph (Malkov & Yashunin,
// "Efficient and robust approximate nearest neighbor search using HNSW
// graphs", 2018) over the vectors of one partition.
//
// Nodes are the partition's node numbers. The graph does not own vectors:
// it reads the partition's arena, and uses 1 - cosine as distance, with
// cosines computed from the quantized unit vectors (a quarter of the memory
// traffic of float32, and traversal is bound by memory). Callers rescore
// the final candidates exactly.
//
// Deleted nodes stay in the graph as tombstones: searches walk through them
// (removing them would cut paths) but never return them, and new nodes do
// not link to them. The partition rebuilds the graph when tombstones pile
// up.
//
// Concurrency: the graph is mutated only by linkBatch, which may link nodes
// in parallel; each node's adjacency is then guarded by its own mutex, and
// the entry point by entryMu. Searches run only while no batch is linking
// (the partition's RWMutex sees to that) and take no locks.
type graph struct {
	m, m0, efc int
	ml         float64
	vecs       *arena

	levels []uint8
	l0     []uint32    // layer 0: per node a block of 1+m0: count, then links
	l0d    []float32   // layer 0: per node m0 distances, one per link
	upper  [][]uint32  // layers 1..level: per node blocks of 1+m, or nil
	upperD [][]float32 // layers 1..level: per node blocks of m distances
	locks  []*[lockChunk]sync.Mutex

	entryMu  sync.RWMutex
	entry    uint32
	maxLevel int // -1 while empty

	rng    *rand.Rand
	visits sync.Pool // *visitSet
}

const lockChunk = 1024

func newGraph(vecs *arena, m, efc int, seed uint64) *graph {
	return &graph{
		m: m, m0: 2 * m, efc: efc, ml: 1 / math.Log(float64(m)), vecs: vecs,
		maxLevel: -1, rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)),
	}
}

func (g *graph) len() int { return len(g.levels) }

// addNode reserves node i (the next number) with a random level drawn
// from the paper's exponential distribution. Nodes must be added in order,
// before linkBatch links them.
func (g *graph) addNode(i uint32) {
	g.addNodeAt(i, min(int(-math.Log(1-g.rng.Float64())*g.ml), 31))
}

// addNodeAt reserves node i at a given level, with no links yet.
func (g *graph) addNodeAt(i uint32, level int) {
	if int(i) != len(g.levels) {
		panic("local: graph nodes must be added in order")
	}
	g.levels = append(g.levels, uint8(level))
	g.l0 = append(g.l0, make([]uint32, 1+g.m0)...)
	g.l0d = append(g.l0d, make([]float32, g.m0)...)
	var up []uint32
	var upD []float32
	if level > 0 {
		up = make([]uint32, level*(1+g.m))
		upD = make([]float32, level*g.m)
	}
	g.upper = append(g.upper, up)
	g.upperD = append(g.upperD, upD)
	if int(i)/lockChunk >= len(g.locks) {
		g.locks = append(g.locks, new([lockChunk]sync.Mutex))
	}
}

func (g *graph) lock(i uint32) *sync.Mutex { return &g.locks[i/lockChunk][i%lockChunk] }

// block returns node i's adjacency at level l: count, then capacity links.
func (g *graph) block(i uint32, l int) []uint32 {
	if l == 0 {
		off := int(i) * (1 + g.m0)
		return g.l0[off : off+1+g.m0 : off+1+g.m0]
	}
	off := (l - 1) * (1 + g.m)
	return g.upper[i][off : off+1+g.m : off+1+g.m]
}

// dists returns the distances of node i's links at level l, in link order
// (the first count are meaningful). Pruning a full list needs them, and
// keeping them saves recomputing one distance per link each time.
func (g *graph) dists(i uint32, l int) []float32 {
	if l == 0 {
		off := int(i) * g.m0
		return g.l0d[off : off+g.m0 : off+g.m0]
	}
	off := (l - 1) * g.m
	return g.upperD[i][off : off+g.m : off+g.m]
}

// setLinks replaces node i's links at level l.
func (g *graph) setLinks(i uint32, l int, links []cand) {
	b, d := g.block(i, l), g.dists(i, l)
	b[0] = uint32(len(links))
	for j, c := range links {
		b[1+j], d[j] = c.id, c.d
	}
}

func (g *graph) neighbors(i uint32, l int) []uint32 {
	b := g.block(i, l)
	return b[1 : 1+b[0]]
}

// query is a quantized unit vector to search for.
type query struct {
	codes []int8
	scale float32
}

func newQuery(unitVec []float32) query {
	codes, scale := quantize(unitVec, 1, nil)
	return query{codes, scale}
}

func (g *graph) nodeQuery(i uint32) query { return query{g.vecs.code(i), g.vecs.scale[i]} }

// dist is the distance between a query and node i.
func (g *graph) dist(q query, i uint32) float32 {
	return 1 - float32(dotInt8(q.codes, g.vecs.code(i)))*q.scale*g.vecs.scale[i]
}

// distNodes is the distance between two nodes.
func (g *graph) distNodes(a, b uint32) float32 {
	return 1 - float32(dotInt8(g.vecs.code(a), g.vecs.code(b)))*g.vecs.scale[a]*g.vecs.scale[b]
}

type cand struct {
	id uint32
	d  float32
}

// visitSet marks visited nodes; a generation counter makes reset O(1).
type visitSet struct {
	gen   uint32
	marks []uint32
}

func (g *graph) getVisits() *visitSet {
	v, _ := g.visits.Get().(*visitSet)
	if v == nil {
		v = &visitSet{}
	}
	if n := g.len(); len(v.marks) < n {
		v.marks = make([]uint32, n+n/4)
		v.gen = 0
	}
	v.gen++
	if v.gen == 0 {
		clear(v.marks)
		v.gen = 1
	}
	return v
}

func (v *visitSet) visit(i uint32) bool {
	if v.marks[i] == v.gen {
		return false
	}
	v.marks[i] = v.gen
	return true
}

// greedy walks level l towards q from cur and returns the closest node.
func (g *graph) greedy(q query, cur cand, l int, locked bool) cand {
	var buf []uint32
	for changed := true; changed; {
		changed = false
		buf = g.readNeighbors(cur.id, l, locked, buf)
		for _, n := range buf {
			if d := g.dist(q, n); d < cur.d {
				cur, changed = cand{n, d}, true
			}
		}
	}
	return cur
}

// readNeighbors returns node i's links at level l, copied under its lock
// when other goroutines may be linking.
func (g *graph) readNeighbors(i uint32, l int, locked bool, buf []uint32) []uint32 {
	if !locked {
		return g.neighbors(i, l)
	}
	mu := g.lock(i)
	mu.Lock()
	buf = append(buf[:0], g.neighbors(i, l)...)
	mu.Unlock()
	return buf
}

// searchLayer is the beam search of the paper's Algorithm 2 at level l,
// with the filtered stopping rule hnswlib uses: nodes that fail accept are
// explored but never kept, and the search ends only when ef accepted nodes
// are closer than every unexplored candidate. It stops early, returning
// false, after maxVisits distance computations (0: no limit). The result
// is sorted by distance, closest first.
func (g *graph) searchLayer(q query, eps []cand, ef, l int, accept func(uint32) bool, maxVisits int, locked bool, vs *visitSet) ([]cand, bool) {
	var cands minHeap
	var res maxHeap
	for _, e := range eps {
		if vs.visit(e.id) {
			cands.push(e)
			if accept(e.id) {
				res.push(e)
			}
		}
	}
	for res.len() > ef {
		res.pop()
	}
	bound := float32(math.Inf(1))
	if res.len() == ef {
		bound = res.top().d
	}
	visits := 0
	var buf, todo []uint32
	for cands.len() > 0 {
		c := cands.pop()
		if c.d > bound && res.len() >= ef {
			break
		}
		buf = g.readNeighbors(c.id, l, locked, buf)
		todo = todo[:0]
		for _, n := range buf {
			if vs.visit(n) {
				todo = append(todo, n)
			}
		}
		// Scoring is bound by memory latency: ask for every vector first,
		// so that their loads overlap.
		for _, n := range todo {
			g.vecs.prefetch(n)
		}
		for _, n := range todo {
			visits++
			d := g.dist(q, n)
			if res.len() < ef || d < bound {
				cands.push(cand{n, d})
				if accept(n) {
					res.push(cand{n, d})
					if res.len() > ef {
						res.pop()
					}
					if res.len() == ef {
						bound = res.top().d
					}
				}
			}
		}
		if maxVisits > 0 && visits > maxVisits {
			return nil, false
		}
	}
	out := []cand(res)
	slices.SortFunc(out, func(a, b cand) int {
		switch {
		case a.d < b.d:
			return -1
		case a.d > b.d:
			return 1
		}
		return int(a.id) - int(b.id)
	})
	return out, true
}

// search returns up to ef accepted nodes closest to the unit vector uq,
// closest first by quantized distance, and false if it gave up after
// maxVisits.
func (g *graph) search(uq []float32, ef int, accept func(uint32) bool, maxVisits int) ([]cand, bool) {
	if g.maxLevel < 0 {
		return nil, true
	}
	q := newQuery(uq)
	cur := cand{g.entry, g.dist(q, g.entry)}
	for l := g.maxLevel; l > 0; l-- {
		cur = g.greedy(q, cur, l, false)
	}
	vs := g.getVisits()
	defer g.visits.Put(vs)
	return g.searchLayer(q, []cand{cur}, ef, 0, accept, maxVisits, false, vs)
}

// linkBatch links nodes that addNode reserved, using up to workers
// goroutines. live reports whether a node may receive links: tombstones
// may not.
func (g *graph) linkBatch(nodes []uint32, workers int, live func(uint32) bool) {
	if len(nodes) == 0 {
		return
	}
	if g.maxLevel < 0 {
		// The first node becomes the entry point before others can link.
		g.entry, g.maxLevel = nodes[0], int(g.levels[nodes[0]])
		nodes = nodes[1:]
	}
	workers = max(1, min(workers, len(nodes)/64))
	if workers == 1 {
		for _, n := range nodes {
			g.link(n, false, live)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(len(nodes)) {
					return
				}
				g.link(nodes[i], true, live)
			}
		})
	}
	wg.Wait()
}

// link inserts node q (Algorithm 1): greedy descent to its level, then at
// each level a beam search of efConstruction and neighbour selection by
// the heuristic; then links both ways, shrinking overfull neighbours with
// the same heuristic. locked says other goroutines are linking too.
//
// q's own links are chosen at every level before any node links to q, so
// no other goroutine can reach q while it is half linked: one that did
// would find q without layer-0 links, link only to q, and q's own links,
// written afterwards, would drop that link and strand it.
func (g *graph) link(q uint32, locked bool, live func(uint32) bool) {
	g.entryMu.RLock()
	ep, top := g.entry, g.maxLevel
	g.entryMu.RUnlock()
	level := int(g.levels[q])
	vq := g.nodeQuery(q)
	cur := cand{ep, g.dist(vq, ep)}
	for l := top; l > level; l-- {
		cur = g.greedy(vq, cur, l, locked)
	}
	vs := g.getVisits()
	defer g.visits.Put(vs)
	selected := make([][]cand, min(level, top)+1)
	for l := min(level, top); l >= 0; l-- {
		if l < min(level, top) {
			vs.gen++ // a fresh visit set per level
			if vs.gen == 0 {
				clear(vs.marks)
				vs.gen = 1
			}
		}
		found, _ := g.searchLayer(vq, []cand{cur}, g.efc, l, func(n uint32) bool { return n != q && live(n) }, 0, locked, vs)
		if len(found) == 0 {
			continue // every node this search reached is a tombstone
		}
		cur = found[0]
		selected[l] = g.selectNeighbors(found, g.m)
	}
	mu := g.lock(q)
	if locked {
		mu.Lock()
	}
	for l, sel := range selected {
		g.setLinks(q, l, sel)
	}
	if locked {
		mu.Unlock()
	}
	for l, sel := range selected {
		for _, s := range sel {
			g.addLink(s.id, q, s.d, l, locked)
		}
	}
	if level > top {
		g.entryMu.Lock()
		if level > g.maxLevel {
			g.entry, g.maxLevel = q, level
		}
		g.entryMu.Unlock()
	}
}

// addLink adds q to n's links at level l; d is their distance. When the
// list is full, q is dropped if it is farther than every current link (the
// heuristic, walking candidates closest first, would consider it last and
// keep it only to fill a slot that is not free); otherwise the list keeps
// the best-spread subset of its links and q.
func (g *graph) addLink(n, q uint32, d float32, l int, locked bool) {
	mu := g.lock(n)
	if locked {
		mu.Lock()
		defer mu.Unlock()
	}
	b, ds := g.block(n, l), g.dists(n, l)
	cnt := int(b[0])
	links := b[1 : 1+cnt]
	if slices.Contains(links, q) {
		return
	}
	if capacity := len(b) - 1; cnt < capacity {
		b[1+cnt], ds[cnt] = q, d
		b[0]++
		return
	}
	if d >= slices.Max(ds[:cnt]) {
		return
	}
	cands := make([]cand, 0, cnt+1)
	cands = append(cands, cand{q, d})
	for j, x := range links {
		cands = append(cands, cand{x, ds[j]})
	}
	slices.SortFunc(cands, func(a, b cand) int {
		switch {
		case a.d < b.d:
			return -1
		case a.d > b.d:
			return 1
		}
		return 0
	})
	g.setLinks(n, l, g.selectNeighbors(cands, len(b)-1))
}

// selectNeighbors is the paper's heuristic (Algorithm 4): walking
// candidates from the closest, keep one only if it is closer to the base
// than to every neighbour kept so far. This keeps links pointing in
// different directions, which is what lets greedy search cross between
// clusters. Slots left over are filled with the closest discarded
// candidates ("keepPrunedConnections"), which helps on clustered data.
// cands must be sorted by distance to the base.
func (g *graph) selectNeighbors(cands []cand, m int) []cand {
	if len(cands) <= m {
		return cands
	}
	selected := make([]cand, 0, m)
	var pruned []cand
	for _, c := range cands {
		if len(selected) == m {
			break
		}
		good := true
		for _, s := range selected {
			if g.distNodes(c.id, s.id) < c.d {
				good = false
				break
			}
		}
		if good {
			selected = append(selected, c)
		} else {
			pruned = append(pruned, c)
		}
	}
	for _, c := range pruned {
		if len(selected) == m {
			break
		}
		selected = append(selected, c)
	}
	return selected
}

// defaultWorkers is how many goroutines link a large batch.
func defaultWorkers() int { return runtime.GOMAXPROCS(0) }

// minHeap orders candidates closest first; maxHeap farthest first.
type minHeap []cand
type maxHeap []cand

func (h minHeap) len() int  { return len(h) }
func (h maxHeap) len() int  { return len(h) }
func (h maxHeap) top() cand { return h[0] }

func (h *minHeap) push(c cand) {
	*h = append(*h, c)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].d <= s[i].d {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *minHeap) pop() cand {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].d < s[m].d {
			m = l
		}
		if r < len(s) && s[r].d < s[m].d {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

func (h *maxHeap) push(c cand) {
	*h = append(*h, c)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].d >= s[i].d {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *maxHeap) pop() cand {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].d > s[m].d {
			m = l
		}
		if r < len(s) && s[r].d > s[m].d {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
