package recall

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hindsight-memory/hindsight/internal/devoverlap"
	"github.com/hindsight-memory/hindsight/lang/lexicon"
)

// TestRelevanceModelShipped loads the embedded model and checks it was
// trained on today's data and features: a change to either without
// `hindsight train relevance` fails here.
func TestRelevanceModelShipped(t *testing.T) {
	m, err := relevanceModel()
	if err != nil {
		t.Fatal(err)
	}
	groups, unrelated, err := LoadRelevanceData(os.DirFS("data"), ".")
	if err != nil {
		t.Fatal(err)
	}
	if want := RelevanceDataHash(groups, unrelated); m.Data != want {
		t.Fatalf("the shipped relevance model was trained on data %s; recall/data hashes to %s: run hindsight train relevance", m.Data, want)
	}
	if m.Threshold <= 0 || m.Threshold >= 1 {
		t.Fatalf("the shipped model's threshold is %v", m.Threshold)
	}
	if len(groups) < 800 || len(relevancePairs(groups, unrelated)) < 4000 {
		t.Fatalf("%d groups, %d pairs: want the data the model was built on", len(groups), len(relevancePairs(groups, unrelated)))
	}
}

// TestRelevanceDataStaysApart fails if a line of the relevance data is
// too close to a sentence of the development corpora.
func TestRelevanceDataStaysApart(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("data", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no relevance data: %v", err)
	}
	devoverlap.Check(t, files...)
}

// TestModelRanksAnswersFirst asks each held-out question against the
// memory it is about and against another group's memory of the same
// file (the same domain, often the same words): ranking by the model's
// probability puts the memory that answers first more often than the
// rule's relevance does, and admits answers the rule finds too little
// in while keeping what it admits of the rest rare.
func TestModelRanksAnswersFirst(t *testing.T) {
	lx := lexicon.Default()
	if lx == nil {
		if os.Getenv("HINDSIGHT_REQUIRE_DICTS") != "" {
			t.Fatal(lexicon.Err())
		}
		t.Skip("the relevance model reads the dictionaries: make dicts")
	}
	m, err := relevanceModel()
	if err != nil {
		t.Fatal(err)
	}
	groups, unrelated, err := LoadRelevanceData(os.DirFS("data"), ".")
	if err != nil {
		t.Fatal(err)
	}
	profiles := map[string]*relProfile{}
	score := func(p relPair) (rule, prob float64) {
		f := pairFeatures(p, lx, profiles)
		if f == nil {
			return 0, 0
		}
		return f[1].Value, m.Score(f)
	}
	byFile := map[string][]RelevanceGroup{}
	for _, g := range groups {
		byFile[g.File] = append(byFile[g.File], g)
	}
	var modelFirst, ruleFirst, answers, admitted, wrong, negatives int
	for _, g := range groups {
		if !relHeldOut(g.ID) {
			continue
		}
		peers := byFile[g.File]
		for i, a := range g.Answers {
			o := peers[(i+len(g.ID))%len(peers)]
			if o.ID == g.ID {
				continue
			}
			rr, pr := score(relPair{q: a.Q, memory: g.Memory, kind: g.Kind})
			ro, po := score(relPair{q: a.Q, memory: o.Memory, kind: o.Kind})
			answers++
			if pr > po {
				modelFirst++
			}
			if rr > ro {
				ruleFirst++
			}
			if rr < DefaultMinRelevance && pr >= m.Threshold {
				admitted++
			}
			if ro < DefaultMinRelevance {
				negatives++
				if po >= m.Threshold {
					wrong++
				}
			}
		}
	}
	t.Logf("held-out answers ranked first: model %d, rule %d of %d; the model admits %d answers the rule misses, and %d of %d other memories the rule rejects",
		modelFirst, ruleFirst, answers, admitted, wrong, negatives)
	if modelFirst <= ruleFirst {
		t.Fatalf("the model ranks the answer first %d times of %d, the rule %d: want the model ahead", modelFirst, answers, ruleFirst)
	}
	if admitted == 0 || float64(wrong) > 0.05*float64(negatives) {
		t.Fatalf("the model admits %d answers the rule misses and %d of %d other memories: want some, and at most 5%%", admitted, wrong, negatives)
	}
	_ = unrelated
}
