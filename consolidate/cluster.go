package consolidate

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/hindsight-memory/hindsight/memory"
)

// Item is an episode with its embedding (the vector the episodes
// collection holds for it, from memory.EpisodeEmbedText).
type Item struct {
	Episode memory.Episode
	Vector  []float32
}

// Linkage is how the similarity of two groups of episodes is derived from
// the similarities of their members.
type Linkage string

// Linkages.
const (
	// LinkageAverage (UPGMA) joins two groups when the mean similarity of
	// all pairs across them reaches the threshold. It tolerates one
	// atypical member without chaining unrelated tasks together, which is
	// what a typical episode needs.
	LinkageAverage Linkage = "average"
	// LinkageComplete joins two groups only when every pair across them
	// reaches the threshold: tighter clusters, more of them.
	LinkageComplete Linkage = "complete"
)

// Cluster defaults.
const (
	// DefaultThreshold is the least average cosine similarity at which
	// groups of episodes join, for neural embedders (bge,
	// text-embedding-3, …). It is not calibrated on data here (the
	// development machines run no neural model): it sits a little below
	// the seeds' near-duplicate threshold of 0.85 (merge.DefaultThreshold),
	// since episodes of one kind of task are less alike than duplicate
	// memories, and errs high because a cluster that fails to form costs
	// nothing (its episodes stay as they are and are tried again next
	// week) while a wrong one blurs a typical episode. Models differ in
	// scale; check a new one on a labelled sample before relying on it.
	DefaultThreshold = 0.80
	// OfflineThreshold is the threshold for the offline lexical embedder
	// (hashed character n-grams), whose scale is much lower: on the
	// corpus in corpus_test.go (sessions distilled by the offline
	// extractor, eight per task) unrelated tasks score at most 0.34
	// against each other, instances of one task 0.48–0.99 (median 0.68
	// for the most varied task), and the same task in English and in
	// Chinese 0.33–0.68 (median 0.56). 0.50 sits between: every instance
	// joins its task, unrelated tasks never meet.
	OfflineThreshold = 0.50
	// DefaultMinSize is the smallest group worth a typical episode: a
	// single episode is its own best summary.
	DefaultMinSize = 2
	// DefaultMaxSize bounds a typical episode: larger groups are split in
	// time order, so that each summary covers a readable number of
	// sessions and one LLM prompt can hold it.
	DefaultMaxSize = 50
	// DefaultMaxItems bounds one call per task type. Clustering takes
	// O(n²) time and n²·2 bytes (a float32 similarity triangle): about
	// 50 MB and a few seconds at 5000. Above it, cluster shorter time
	// windows (one month of episodes per call, oldest first).
	DefaultMaxItems = 5000
)

// ThresholdFor returns the default threshold for an embedding model:
// OfflineThreshold for the offline lexical embedder (models named
// "offline-…"), DefaultThreshold for anything else.
func ThresholdFor(embedderModel string) float64 {
	if strings.HasPrefix(embedderModel, "offline-") {
		return OfflineThreshold
	}
	return DefaultThreshold
}

// ClusterConfig configures Cluster. Zero fields take the defaults.
type ClusterConfig struct {
	// Threshold is the least similarity (by Linkage) at which two groups
	// join, in (0, 1]. Default DefaultThreshold; use ThresholdFor with the
	// embedder's model name.
	Threshold float64
	// Linkage defaults to LinkageAverage.
	Linkage Linkage
	// MinSize is the smallest cluster returned (default DefaultMinSize).
	MinSize int
	// MaxSize is the largest; bigger groups are split in time order into
	// near-equal parts (default DefaultMaxSize, at least 2·MinSize so
	// that every part keeps MinSize members).
	MaxSize int
	// MaxItems caps the episodes of one task type per call (default
	// DefaultMaxItems).
	MaxItems int
}

func (c ClusterConfig) withDefaults() ClusterConfig {
	if c.Threshold == 0 {
		c.Threshold = DefaultThreshold
	}
	if c.Linkage == "" {
		c.Linkage = LinkageAverage
	}
	if c.MinSize == 0 {
		c.MinSize = DefaultMinSize
	}
	if c.MaxSize == 0 {
		c.MaxSize = max(DefaultMaxSize, 2*c.MinSize)
	}
	if c.MaxItems == 0 {
		c.MaxItems = DefaultMaxItems
	}
	return c
}

// Validate checks c after defaults are applied.
func (c ClusterConfig) Validate() error {
	const op = "consolidate: cluster config"
	c = c.withDefaults()
	switch {
	case math.IsNaN(c.Threshold) || c.Threshold <= 0 || c.Threshold > 1:
		return memory.Invalidf(op, "threshold %v is outside (0, 1]: use ThresholdFor(embedder model)", c.Threshold)
	case c.Linkage != LinkageAverage && c.Linkage != LinkageComplete:
		return memory.Invalidf(op, "linkage %q is not %q or %q", c.Linkage, LinkageAverage, LinkageComplete)
	case c.MinSize < 2:
		return memory.Invalidf(op, "min size %d is below 2: a cluster of one episode has nothing to consolidate", c.MinSize)
	case c.MaxSize < 2*c.MinSize:
		return memory.Invalidf(op, "max size %d is below twice the min size %d: the parts of a split cluster could fall below the min size", c.MaxSize, c.MinSize)
	case c.MaxItems < 2:
		return memory.Invalidf(op, "max items %d is below 2", c.MaxItems)
	}
	return nil
}

// Cluster groups the episodes of one tenant into clusters of similar
// tasks, by agglomerative clustering of their embeddings (cosine
// similarity, cfg.Linkage, stopping at cfg.Threshold), separately for each
// user and task type: a typical episode summarises sessions of one user
// (or of no user), so it belongs to that user's scope and is shown to whom
// its members are (memory.Viewer.SeesEpisode), never to another user. It returns the clusters as indices into items: each cluster's
// members in time order (EndedAt, then ID), the clusters ordered by their
// first member the same way. Episodes in no cluster of at least
// cfg.MinSize are left out; clusters above cfg.MaxSize are split into
// consecutive runs in time order.
//
// The result depends only on the set of items, never on their order:
// items are put in time order first and every tie is broken by episode ID.
// It is the same on every platform (see dot).
//
// Errors (EINVALID): an invalid config; items of more than one tenant;
// an item without ID or with an ID seen twice; a summary episode (typical
// episodes are not consolidated again; pass live or cold episodes);
// vectors that are empty or of different lengths; more than cfg.MaxItems
// episodes of one task type.
func Cluster(items []Item, cfg ClusterConfig) ([][]int, error) {
	const op = "consolidate: cluster"
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if err := validateItems(op, items); err != nil {
		return nil, err
	}
	order := canonicalOrder(items)
	rank := make([]int, len(items))
	for r, i := range order {
		rank[i] = r
	}

	// Users and task types in order of their first episode, each with its
	// episodes in time order.
	type group struct{ user, taskType string }
	var groups []group
	byGroup := map[group][]int{}
	for _, i := range order {
		g := group{items[i].Episode.UserID, items[i].Episode.TaskType}
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], i)
	}

	var out [][]int
	for _, g := range groups {
		idx := byGroup[g]
		if len(idx) > cfg.MaxItems {
			return nil, memory.Invalidf(op, "task type %q has %d episodes of user %q; the limit is %d per call: cluster shorter time windows (for example one month at a time)", g.taskType, len(idx), g.user, cfg.MaxItems)
		}
		if len(idx) < cfg.MinSize {
			continue
		}
		vecs := make([][]float32, len(idx))
		for k, i := range idx {
			vecs[k] = items[i].Vector
		}
		for _, group := range agglomerate(vecs, cfg.Threshold, cfg.Linkage) {
			members := make([]int, len(group))
			for k, g := range group {
				members[k] = idx[g]
			}
			slices.SortFunc(members, func(a, b int) int { return rank[a] - rank[b] })
			for _, part := range splitRuns(members, cfg.MaxSize) {
				if len(part) >= cfg.MinSize {
					out = append(out, part)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b []int) int { return rank[a[0]] - rank[b[0]] })
	return out, nil
}

func validateItems(op string, items []Item) error {
	seen := make(map[string]bool, len(items))
	dim := -1
	tenant := ""
	for i, it := range items {
		ep := it.Episode
		switch {
		case ep.ID == "":
			return memory.Invalidf(op, "item %d: episode id is required", i)
		case seen[ep.ID]:
			return memory.Invalidf(op, "item %d: episode %s is given twice", i, ep.ID)
		case ep.Status == memory.EpisodeSummary:
			return memory.Invalidf(op, "item %d: episode %s is a typical (summary) episode; cluster live or cold episodes only", i, ep.ID)
		case len(it.Vector) == 0:
			return memory.Invalidf(op, "item %d: episode %s has no vector", i, ep.ID)
		case !finite(it.Vector):
			return memory.Invalidf(op, "item %d: episode %s has a vector with NaN or infinite values", i, ep.ID)
		case dim >= 0 && len(it.Vector) != dim:
			return memory.Invalidf(op, "item %d: episode %s has a vector of %d dimensions, the others have %d", i, ep.ID, len(it.Vector), dim)
		case i > 0 && ep.Tenant != tenant:
			return memory.Invalidf(op, "items belong to tenants %q and %q: cluster one tenant at a time", tenant, ep.Tenant)
		}
		if i == 0 {
			if err := memory.ValidateTenant(op, ep.Tenant); err != nil {
				return err
			}
			tenant = ep.Tenant
		}
		seen[ep.ID] = true
		dim = len(it.Vector)
	}
	return nil
}

func finite(v []float32) bool {
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}

// canonicalOrder returns the indices of items in time order: EndedAt, then
// ID.
func canonicalOrder(items []Item) []int {
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return compareEpisodes(&items[a].Episode, &items[b].Episode)
	})
	return order
}

func compareEpisodes(a, b *memory.Episode) int {
	if c := a.EndedAt.Compare(b.EndedAt); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// splitRuns cuts members (in time order) into ceil(n/maxSize) consecutive
// runs whose sizes differ by at most one.
func splitRuns(members []int, maxSize int) [][]int {
	n := len(members)
	if n <= maxSize {
		return [][]int{members}
	}
	k := (n + maxSize - 1) / maxSize
	out := make([][]int, 0, k)
	start := 0
	for p := range k {
		size := n / k
		if p < n%k {
			size++
		}
		out = append(out, members[start:start+size])
		start += size
	}
	return out
}

// agglomerate clusters vectors by agglomerative clustering with the given
// linkage, joining groups while their linkage similarity is at least
// threshold, and returns the groups as indices into vecs (every index in
// exactly one group, singletons included).
//
// It runs the nearest-neighbour-chain algorithm: follow nearest
// neighbours from a group until two groups are each other's nearest
// neighbours, and join them. Average and complete linkage are reducible
// (joining two groups never brings the result closer to a third than the
// closer of the two was), so this yields the same hierarchy as always
// joining the globally closest pair, in O(n²) time instead of O(n³). The
// same property makes the threshold cut simple: a group whose nearest
// neighbour is below the threshold can never reach it later, so it is
// final and leaves the active set. Ties go to the chain's previous group
// (which keeps the chain from cycling), then to the lower index.
func agglomerate(vecs [][]float32, threshold float64, linkage Linkage) [][]int {
	n := len(vecs)
	if n == 0 {
		return nil
	}
	sim := newTriangle(vecs)
	thr := float32(threshold)
	// A threshold that rounds up in float32 would refuse pairs at exactly
	// the threshold; round it down instead.
	if float64(thr) > threshold {
		thr = math.Nextafter32(thr, float32(math.Inf(-1)))
	}
	size := make([]int, n)
	members := make([][]int, n)
	active := make([]int, n) // active groups, ascending
	for i := range n {
		size[i] = 1
		members[i] = []int{i}
		active[i] = i
	}
	deactivate := func(i int) {
		k, _ := slices.BinarySearch(active, i)
		active = slices.Delete(active, k, k+1)
	}
	var done [][]int
	var chain []int
	for len(active) > 0 {
		if len(chain) == 0 {
			chain = append(chain, active[0])
		}
		a := chain[len(chain)-1]
		prev := -1
		if len(chain) >= 2 {
			prev = chain[len(chain)-2]
		}
		// The most similar active group; j ascends, so only a strictly
		// better one or prev replaces an earlier one.
		b, best := -1, float32(0)
		for _, j := range active {
			if j == a {
				continue
			}
			if s := sim.at(a, j); b < 0 || s > best || (s == best && j == prev) {
				b, best = j, s
			}
		}
		switch {
		case b < 0 || best < thr:
			deactivate(a)
			done = append(done, members[a])
			members[a] = nil
			chain = chain[:len(chain)-1]
		case b == prev:
			chain = chain[:len(chain)-2]
			keep, drop := min(a, b), max(a, b)
			for _, k := range active {
				if k == a || k == b {
					continue
				}
				sim.set(keep, k, link(linkage, sim.at(a, k), sim.at(b, k), size[a], size[b]))
			}
			size[keep] += size[drop]
			members[keep] = append(members[keep], members[drop]...)
			members[drop] = nil
			deactivate(drop)
		default:
			chain = append(chain, b)
		}
	}
	return done
}

// link is the Lance–Williams update: the similarity of group k to the
// union of groups a and b, from its similarities to each. The average is
// clamped to [min, max] of its inputs so that rounding can never make a
// union closer than both parts (reducibility, which the chain algorithm
// relies on). Its products are exact in float64 (an int below 2²⁹ times
// a float32), so fusing them would change nothing.
func link(l Linkage, sa, sb float32, na, nb int) float32 {
	lo, hi := min(sa, sb), max(sa, sb)
	if l == LinkageComplete {
		return lo
	}
	avg := float32((float64(na)*float64(sa) + float64(nb)*float64(sb)) / float64(na+nb))
	return min(max(avg, lo), hi)
}

// triangle holds the pairwise similarities of n vectors, i < j, row by
// row, in float32: n(n-1)/2 entries.
type triangle struct {
	val []float32
	row []int // row[i] + j is the index of (i, j), i < j
}

func (t *triangle) index(i, j int) int {
	if i > j {
		i, j = j, i
	}
	return t.row[i] + j
}

func (t *triangle) at(i, j int) float32     { return t.val[t.index(i, j)] }
func (t *triangle) set(i, j int, s float32) { t.val[t.index(i, j)] = s }

// tile is the side of the square blocks the similarity triangle is
// computed in: two blocks of 64 vectors of 384 float32 take 192 KiB, so
// they stay in cache while every pair between them is computed.
const tile = 64

// newTriangle computes the cosine similarities of vecs in tiles, rows of
// tiles spread over the available CPUs. Each entry is computed the same
// way whichever goroutine computes it, so the result does not depend on
// scheduling.
func newTriangle(vecs [][]float32) *triangle {
	n := len(vecs)
	t := &triangle{val: make([]float32, n*(n-1)/2), row: make([]int, n)}
	for i := range n {
		t.row[i] = i*n - i*(i+1)/2 - i - 1
	}
	if n < 2 {
		return t
	}
	dim := len(vecs[0])
	unit := make([]float32, n*dim)
	for i, v := range vecs {
		var norm float64
		for _, x := range v {
			norm += float64(x) * float64(x)
		}
		if norm == 0 {
			continue // a zero vector is similar to nothing
		}
		inv := 1 / math.Sqrt(norm)
		for d, x := range v {
			unit[i*dim+d] = float32(float64(x) * inv)
		}
	}
	vec := func(i int) []float32 { return unit[i*dim : (i+1)*dim] }
	tiles := (n + tile - 1) / tile
	work := make(chan int, tiles)
	for ti := range tiles {
		work <- ti
	}
	close(work)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), tiles) {
		wg.Go(func() {
			for ti := range work {
				for tj := ti; tj < tiles; tj++ {
					for i := ti * tile; i < min(n, (ti+1)*tile); i++ {
						a := vec(i)
						for j := max(i+1, tj*tile); j < min(n, (tj+1)*tile); j++ {
							t.val[t.row[i]+j] = float32(dot(a, vec(j)))
						}
					}
				}
			}
		})
	}
	wg.Wait()
	return t
}

// dot is the dot product of two equally long vectors, accumulated in
// float64 in a fixed order (four running sums). The product of two
// float32 values is exact in float64, so a compiler that fuses multiply
// and add (arm64, amd64 v3) computes the same sums as one that does not:
// results are identical on every platform.
func dot(a, b []float32) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += float64(a[i]) * float64(b[i])
		s1 += float64(a[i+1]) * float64(b[i+1])
		s2 += float64(a[i+2]) * float64(b[i+2])
		s3 += float64(a[i+3]) * float64(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += float64(a[i]) * float64(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// String describes a config for logs.
func (c ClusterConfig) String() string {
	c = c.withDefaults()
	return fmt.Sprintf("threshold=%.3f linkage=%s min=%d max=%d", c.Threshold, c.Linkage, c.MinSize, c.MaxSize)
}
