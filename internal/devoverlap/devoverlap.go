// Package devoverlap keeps training data apart from the development
// corpora: a model trained on sentences of the scenarios it is scored on
// (or of LoCoMo's conversations) would fit them instead of the language.
// Check fails a test when any string of a training file is too close to
// one of their sentences: a Jaccard index of character trigrams of 0.6 or
// more, on lower-cased text with white space collapsed.
package devoverlap

import (
	"bufio"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// Threshold is the trigram similarity a training string may not reach.
const Threshold = 0.6

// minRunes is the length below which strings are not compared: short
// values ("UTC", "en") are shared by any two corpora.
const minRunes = 12

// Corpus is the development sentences, indexed by trigram.
type Corpus struct {
	refs  []string
	grams []map[string]bool
	index map[string][]int
}

var splitRE = regexp.MustCompile(`(?:[.!?。！？；;])\s*|\n+`)

// Load reads the development corpora named by HINDSIGHT_SCENARIOS and
// HINDSIGHT_LOCOMO (the Makefile sets them when ../shared/bench is
// there); ok is false when neither is set.
func Load() (c *Corpus, ok bool, err error) {
	c = &Corpus{index: map[string][]int{}}
	seen := map[string]bool{}
	add := func(s string) {
		s = strings.TrimSpace(s)
		if len([]rune(s)) < minRunes || seen[s] {
			return
		}
		seen[s] = true
		g := trigrams(s)
		c.refs = append(c.refs, s)
		c.grams = append(c.grams, g)
		for t := range g {
			c.index[t] = append(c.index[t], len(c.refs)-1)
		}
	}
	for _, env := range []string{"HINDSIGHT_SCENARIOS", "HINDSIGHT_LOCOMO"} {
		path := os.Getenv(env)
		if path == "" {
			continue
		}
		ok = true
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, false, err
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, false, err
		}
		strs(v, func(s string) {
			for _, part := range splitRE.Split(s, -1) {
				add(part)
			}
			add(s)
		})
	}
	return c, ok, nil
}

// Closest returns the development sentence most similar to s and the
// similarity, or "" and 0 for a string too short to compare.
func (c *Corpus) Closest(s string) (string, float64) {
	if len([]rune(strings.TrimSpace(s))) < minRunes {
		return "", 0
	}
	g := trigrams(s)
	if len(g) == 0 {
		return "", 0
	}
	shared := map[int]int{}
	for t := range g {
		for _, i := range c.index[t] {
			shared[i]++
		}
	}
	best, bestSim := "", 0.0
	for i, n := range shared {
		if sim := float64(n) / float64(len(g)+len(c.grams[i])-n); sim > bestSim {
			best, bestSim = c.refs[i], sim
		}
	}
	return best, bestSim
}

// Check fails t for every string of the JSON lines of the files at paths
// that is Threshold-similar to a development sentence, and skips it when
// the corpora are not there.
func Check(t *testing.T, paths ...string) {
	t.Helper()
	c, ok, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Skip("set HINDSIGHT_SCENARIOS or HINDSIGHT_LOCOMO (make test does) to check the data against the development corpora")
	}
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for n := 1; sc.Scan(); n++ {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var v any
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				t.Fatalf("%s:%d: %v", path, n, err)
			}
			strs(v, func(s string) {
				if ref, sim := c.Closest(s); sim >= Threshold {
					t.Errorf("%s:%d: %q is %.2f trigram-similar to the development corpora's %q", path, n, s, sim, ref)
				}
			})
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
}

func trigrams(s string) map[string]bool {
	rs := []rune(strings.Join(strings.Fields(strings.ToLower(s)), " "))
	out := make(map[string]bool, len(rs))
	for i := 0; i+3 <= len(rs); i++ {
		out[string(rs[i:i+3])] = true
	}
	return out
}

// strs calls f with every string in a decoded JSON value.
func strs(v any, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case []any:
		for _, e := range x {
			strs(e, f)
		}
	case map[string]any:
		for _, e := range x {
			strs(e, f)
		}
	}
}
