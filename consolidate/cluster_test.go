package consolidate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

var day0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// item builds an item of tenant acme ending n days after day0.
func item(id, taskType string, days int, vec ...float32) Item {
	return Item{
		Episode: memory.Episode{ID: id, Tenant: "acme", TaskType: taskType, Status: memory.EpisodeLive, EndedAt: day0.Add(time.Duration(days) * 24 * time.Hour)},
		Vector:  vec,
	}
}

// unitAt is a 2-d unit vector at angle deg; the cosine of two of them is
// the cosine of the angle between.
func unitAt(deg float64) []float32 {
	r := deg * math.Pi / 180
	return []float32{float32(math.Cos(r)), float32(math.Sin(r))}
}

// idsOf renders clusters as episode IDs, for comparisons and messages.
func idsOf(items []Item, clusters [][]int) [][]string {
	out := [][]string{}
	for _, c := range clusters {
		var ids []string
		for _, i := range c {
			ids = append(ids, items[i].Episode.ID)
		}
		out = append(out, ids)
	}
	return out
}

func TestClusterTable(t *testing.T) {
	at := func(id string, days int, deg float64) Item { return item(id, "data-import", days, unitAt(deg)...) }
	of := func(user string, it Item) Item { it.Episode.UserID = user; return it }
	tests := []struct {
		name  string
		items []Item
		cfg   ClusterConfig
		want  [][]string
	}{
		{"no items", nil, ClusterConfig{}, [][]string{}},
		{"one item", []Item{at("a", 1, 0)}, ClusterConfig{}, [][]string{}},
		{"two identical", []Item{at("b", 2, 0), at("a", 1, 0)}, ClusterConfig{}, [][]string{{"a", "b"}}},
		{"two orthogonal", []Item{at("a", 1, 0), at("b", 2, 90)}, ClusterConfig{Threshold: 0.1}, [][]string{}},
		// cos 60° = 0.5: joined at a threshold of exactly 0.5, not above.
		{"at the threshold", []Item{at("a", 1, 0), at("b", 2, 60)}, ClusterConfig{Threshold: 0.5}, [][]string{{"a", "b"}}},
		{"just above it", []Item{at("a", 1, 0), at("b", 2, 60)}, ClusterConfig{Threshold: 0.501}, [][]string{}},
		{"task types never mix", []Item{at("a", 1, 0), item("b", "reporting", 2, unitAt(0)...)}, ClusterConfig{}, [][]string{}},
		// Reproduction: a typical episode summarised several users'
		// sessions, had no user, and was shown to everyone.
		{"users never mix", []Item{of("alice", at("a1", 1, 0)), of("bob", at("b1", 2, 0)), of("alice", at("a2", 3, 0)), of("bob", at("b2", 4, 0)), at("n1", 5, 0), at("n2", 6, 0)},
			ClusterConfig{}, [][]string{{"a1", "a2"}, {"b1", "b2"}, {"n1", "n2"}}},
		{
			"two groups, ordered by their first episode",
			[]Item{at("x1", 5, 90), at("a1", 2, 0), at("x2", 1, 91), at("a2", 3, 1), at("a3", 4, 2)},
			ClusterConfig{Threshold: 0.9},
			[][]string{{"x2", "x1"}, {"a1", "a2", "a3"}},
		},
		{
			"min size drops small groups",
			[]Item{at("a", 1, 0), at("b", 2, 1), at("x", 3, 90), at("y", 4, 91), at("z", 5, 92)},
			ClusterConfig{Threshold: 0.9, MinSize: 3, MaxSize: 6},
			[][]string{{"x", "y", "z"}},
		},
		// a–b 40°, b–c 40°, a–c 80°: average linkage joins c to {a,b} at
		// mean(cos 80°, cos 40°) = 0.47; complete linkage needs cos 80° = 0.17.
		{"average linkage", []Item{at("a", 1, 0), at("b", 2, 40), at("c", 3, 80)}, ClusterConfig{Threshold: 0.45}, [][]string{{"a", "b", "c"}}},
		{"complete linkage", []Item{at("a", 1, 0), at("b", 2, 40), at("c", 3, 80)}, ClusterConfig{Threshold: 0.45, Linkage: LinkageComplete}, [][]string{{"a", "b"}}},
		{"zero vector joins nothing", []Item{at("a", 1, 0), item("z", "data-import", 2, 0, 0), at("b", 3, 0)}, ClusterConfig{}, [][]string{{"a", "b"}}},
		{"ties in time broken by ID", []Item{at("b", 1, 0), at("a", 1, 0), at("c", 1, 0)}, ClusterConfig{}, [][]string{{"a", "b", "c"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Cluster(tt.items, tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if g := idsOf(tt.items, got); !slices.EqualFunc(g, tt.want, slices.Equal) {
				t.Errorf("clusters = %q, want %q", g, tt.want)
			}
		})
	}
}

func TestClusterSplitsLargeGroupsInTimeOrder(t *testing.T) {
	tests := []struct {
		n, maxSize int
		sizes      []int
	}{
		{7, 4, []int{4, 3}},
		{10, 4, []int{4, 3, 3}},
		{8, 4, []int{4, 4}},
		{4, 4, []int{4}},
		{101, 50, []int{34, 34, 33}},
	}
	for _, tt := range tests {
		var items []Item
		for i := range tt.n {
			// IDs run against time, so time order (not ID order) must win.
			items = append(items, item(fmt.Sprintf("ep%03d", tt.n-i), "coding", i, 1, 0))
		}
		got, err := Cluster(items, ClusterConfig{MaxSize: tt.maxSize})
		if err != nil {
			t.Fatal(err)
		}
		var sizes []int
		next := 0
		for _, c := range got {
			sizes = append(sizes, len(c))
			for _, i := range c {
				if i != next {
					t.Fatalf("n=%d: clusters %v are not consecutive runs in time order", tt.n, got)
				}
				next++
			}
		}
		if !slices.Equal(sizes, tt.sizes) {
			t.Errorf("n=%d max=%d: sizes %v, want %v", tt.n, tt.maxSize, sizes, tt.sizes)
		}
	}
}

func TestClusterRejectsBadInput(t *testing.T) {
	ok := func(id string) Item { return item(id, "coding", 1, 1, 0) }
	nan := ok("n")
	nan.Vector = []float32{float32(math.NaN()), 0}
	summary := ok("s")
	summary.Episode.Status = memory.EpisodeSummary
	other := ok("o")
	other.Episode.Tenant = "globex"
	noID := ok("")
	badTenant := ok("t")
	badTenant.Episode.Tenant = "no spaces allowed"
	tests := []struct {
		name  string
		items []Item
		cfg   ClusterConfig
		want  string
	}{
		{"two tenants", []Item{ok("a"), other}, ClusterConfig{}, "cluster one tenant at a time"},
		{"invalid tenant", []Item{badTenant}, ClusterConfig{}, "tenant"},
		{"duplicate id", []Item{ok("a"), ok("a")}, ClusterConfig{}, "given twice"},
		{"missing id", []Item{noID}, ClusterConfig{}, "episode id is required"},
		{"summary episode", []Item{ok("a"), summary}, ClusterConfig{}, "typical (summary) episode"},
		{"no vector", []Item{ok("a"), item("b", "coding", 1)}, ClusterConfig{}, "has no vector"},
		{"dimension mismatch", []Item{ok("a"), item("b", "coding", 1, 1, 0, 0)}, ClusterConfig{}, "3 dimensions, the others have 2"},
		{"NaN", []Item{ok("a"), nan}, ClusterConfig{}, "NaN"},
		{"too many", []Item{ok("a"), ok("b"), ok("c")}, ClusterConfig{MaxItems: 2}, "cluster shorter time windows"},
		{"negative threshold", nil, ClusterConfig{Threshold: -0.5}, "outside (0, 1]"},
		{"threshold above 1", nil, ClusterConfig{Threshold: 1.5}, "outside (0, 1]"},
		{"unknown linkage", nil, ClusterConfig{Linkage: "single"}, "linkage"},
		{"min size 1", nil, ClusterConfig{MinSize: 1}, "min size 1"},
		{"max below twice min", nil, ClusterConfig{MinSize: 3, MaxSize: 5}, "twice the min size"},
	}
	for _, tt := range tests {
		_, err := Cluster(tt.items, tt.cfg)
		if !memory.IsInvalid(err) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want EINVALID mentioning %q", tt.name, err, tt.want)
		}
	}
}

func TestThresholdFor(t *testing.T) {
	if got := ThresholdFor("offline-ngram-v1-d384"); got != OfflineThreshold {
		t.Errorf("offline embedder: %v", got)
	}
	if got := ThresholdFor("text-embedding-3-small"); got != DefaultThreshold {
		t.Errorf("neural embedder: %v", got)
	}
}

// naiveAgglomerate is the textbook algorithm the chain algorithm must
// agree with: repeatedly join the globally most similar pair of groups
// (recomputing linkage from the members) while it reaches the threshold.
func naiveAgglomerate(vecs [][]float32, threshold float64, l Linkage) [][]int {
	groups := make([][]int, len(vecs))
	for i := range vecs {
		groups[i] = []int{i}
	}
	linkSim := func(a, b []int) float64 {
		sum, lo := 0.0, math.Inf(1)
		for _, i := range a {
			for _, j := range b {
				s := memory.Cosine(vecs[i], vecs[j])
				sum += s
				lo = math.Min(lo, s)
			}
		}
		if l == LinkageComplete {
			return lo
		}
		return sum / float64(len(a)*len(b))
	}
	for {
		bi, bj, best := -1, -1, math.Inf(-1)
		for i := range groups {
			for j := i + 1; j < len(groups); j++ {
				if s := linkSim(groups[i], groups[j]); s > best {
					bi, bj, best = i, j, s
				}
			}
		}
		if bi < 0 || best < threshold {
			return groups
		}
		groups[bi] = append(groups[bi], groups[bj]...)
		groups = slices.Delete(groups, bj, bj+1)
	}
}

// partition renders groups canonically: members sorted, groups sorted.
func partition(groups [][]int) string {
	var parts []string
	for _, g := range groups {
		g = slices.Clone(g)
		slices.Sort(g)
		parts = append(parts, fmt.Sprint(g))
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// TestChainMatchesNaive checks the nearest-neighbour chain against the
// naive algorithm on random clustered data, for both linkages and a
// range of thresholds. Random vectors have no exact ties, so the two must
// produce the same partition.
func TestChainMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 60 {
		n := 2 + rng.IntN(40)
		dim := 4 + rng.IntN(12)
		centres := make([][]float64, 1+rng.IntN(5))
		for c := range centres {
			centres[c] = make([]float64, dim)
			for d := range dim {
				centres[c][d] = rng.NormFloat64()
			}
		}
		vecs := make([][]float32, n)
		for i := range n {
			c := centres[rng.IntN(len(centres))]
			vecs[i] = make([]float32, dim)
			for d := range dim {
				vecs[i][d] = float32(c[d] + 0.6*rng.NormFloat64())
			}
		}
		for _, l := range []Linkage{LinkageAverage, LinkageComplete} {
			for _, thr := range []float64{0.2, 0.5, 0.7, 0.9} {
				got := partition(agglomerate(vecs, thr, l))
				want := partition(naiveAgglomerate(vecs, thr, l))
				if got != want {
					t.Fatalf("trial %d (n=%d, %s, threshold %.1f):\nchain %s\nnaive %s", trial, n, l, thr, got, want)
				}
			}
		}
	}
}

// TestClusterIgnoresInputOrder is the property that makes Cluster safe in
// a retried activity: any permutation of the input gives the same
// clusters. The data has exact ties (repeated vectors), where only the
// tie-breaking rules keep the result stable.
func TestClusterIgnoresInputOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var items []Item
	for i := range 60 {
		v := make([]float32, 8)
		base := i % 6 // six distinct directions, each ten times
		for d := range v {
			v[d] = float32(math.Sin(float64(base*8+d))) + float32(i%3)*0.05
		}
		// Several episodes share an end time, so ID order matters too.
		items = append(items, item(fmt.Sprintf("ep%02d", (i*37)%60), []string{"coding", "ops"}[i%2], i/4, v...))
	}
	corpus := corpusItems(t, buildCorpus(t, 6))
	for name, set := range map[string][]Item{"synthetic with ties": items, "corpus": corpus} {
		for _, l := range []Linkage{LinkageAverage, LinkageComplete} {
			cfg := ClusterConfig{Threshold: 0.6, Linkage: l, MaxSize: 6}
			first, err := Cluster(set, cfg)
			if err != nil {
				t.Fatal(err)
			}
			want := idsOf(set, first)
			if len(want) < 2 {
				t.Fatalf("%s: only %d clusters; the property needs several", name, len(want))
			}
			for range 25 {
				shuffled := slices.Clone(set)
				rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
				got, err := Cluster(shuffled, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if g := idsOf(shuffled, got); !slices.EqualFunc(g, want, slices.Equal) {
					t.Fatalf("%s, %s: shuffled input gave\n%q\nwant\n%q", name, l, g, want)
				}
			}
		}
	}
}

// TestClusterCorpusAtOfflineThreshold checks the offline default on
// episodes distilled by the offline extractor and embedded by the offline
// embedder: every episode lands in a cluster of its own task family, and
// unrelated tasks never share one. The English and Chinese CSV sessions
// are one task (the same failure and fix), so they may join.
func TestClusterCorpusAtOfflineThreshold(t *testing.T) {
	corpus := buildCorpus(t, 8)
	items := corpusItems(t, corpus)
	family := func(scenario string) string {
		if strings.HasPrefix(scenario, "csv-encoding") {
			return "csv-encoding"
		}
		return scenario
	}
	clusters, err := Cluster(items, ClusterConfig{Threshold: ThresholdFor("offline-ngram-v1-d384")})
	if err != nil {
		t.Fatal(err)
	}
	clustered := 0
	for _, c := range clusters {
		f := family(corpus[c[0]].scenario)
		for _, i := range c {
			if family(corpus[i].scenario) != f {
				t.Errorf("cluster mixes %s and %s", corpus[c[0]].scenario, corpus[i].scenario)
			}
		}
		clustered += len(c)
	}
	if clustered != len(items) {
		t.Errorf("%d of %d episodes clustered; every scenario repeats 8 times, so all should be", clustered, len(items))
	}
	// The families must not collapse into one: as many clusters as
	// families at least.
	if len(clusters) < len(corpusScenarios)-1 {
		t.Errorf("%d clusters for %d task families", len(clusters), len(corpusScenarios)-1)
	}
}
