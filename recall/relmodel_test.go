package recall

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/hindsight-memory/hindsight/internal/devoverlap"
	"github.com/hindsight-memory/hindsight/lang/lexicon"
	"github.com/hindsight-memory/hindsight/memory"
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
	lx := modelLexicon(t)
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

// TestRelQueryMatchesRelFeatures checks that recall's way of computing the
// model's features (a relQuery met by each candidate's units) gives
// exactly what training computes (relFeatures over two profiles), on
// every pair of the relevance data and across groups, reusing one
// relQuery for all the memories a query is met with, as a recall does.
func TestRelQueryMatchesRelFeatures(t *testing.T) {
	lx := modelLexicon(t)
	groups, unrelated, err := LoadRelevanceData(os.DirFS("data"), ".")
	if err != nil {
		t.Fatal(err)
	}
	pairs := relevancePairs(groups, unrelated)
	byQuery := map[string][]relPair{}
	var order []string
	for _, p := range pairs {
		if _, ok := byQuery[p.q]; !ok {
			order = append(order, p.q)
		}
		byQuery[p.q] = append(byQuery[p.q], p)
	}
	// Every query also meets a few other queries' memories, as a recall's
	// candidates that have little to do with it.
	compared := 0
	for i, text := range order {
		ps := byQuery[text]
		for k := 1; k <= 3; k++ {
			other := byQuery[order[(i+k*97)%len(order)]][0]
			other.q = text
			ps = append(ps, other)
		}
		q := newRelQuery(text, lx)
		qp := profileOf(text, lx)
		for _, p := range ps {
			rule := 0.5 * float64(len(p.memory)%2) // both with and without rule evidence
			want := relFeatures(text, qp, profileOf(memoryText(memory.Memory{Content: p.memory}), lx), rule, p.kind, lx)
			got := q.features(unitsOf(p.memory, lx), rule)
			if !slices.Equal(got, want) {
				t.Fatalf("query %q, memory %q:\n got %v\nwant %v", text, p.memory, got, want)
			}
			compared++
		}
	}
	if compared < 1000 {
		t.Fatalf("compared %d pairs; the data should give thousands", compared)
	}
	t.Logf("%d pairs give the same features", compared)
}

// The expressions the answer-shape scanners stand for (relmodel.go).
var (
	timeWordRE = regexp.MustCompile(`(?i)\b(?:mon|tues|wednes|thurs|fri|satur|sun)day|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|\b\d{1,2}(?::\d\d|\s?[ap]m)\b|\b(?:daily|weekly|monthly|quarterly|yearly|annually|morning|evening|noon|midnight|deadline|hours?|days?|weeks?|months?|years?)\b|周[一二三四五六日末]|星期|[上下每]午|早上|晚上|点|号|月|天|小时|分钟|季度|年`)
	nameRE     = regexp.MustCompile(`[a-z,;:] (?:[A-Z][a-z]+)|先生|女士|经理|老师|主管|总监|负责人`)
)

// TestShapeScanners holds holdsTime and holdsName to the expressions they
// stand for, on every text of the relevance data, on those texts cut at
// every few bytes (so that every boundary case meets the scanners), and
// on hand-written edge cases.
func TestShapeScanners(t *testing.T) {
	groups, unrelated, err := LoadRelevanceData(os.DirFS("data"), ".")
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"", "9am", "9 am", "9\tPM", "10:30", "10:3", "10:300", "123:45", "1:45pm", "at 7pm.", "x7pm", "7pma",
		"Mondays", "amonday", "January", "jan2", "Septembers", "mayor", "may_", "hours", "hourly", "DAYS", "a Bob", "a bob",
		"x, Ann", "x,Ann", "; Al", ": B", "A Bc", "周末", "周七", "每午", "负责人", "\xff9am", "9 \xffam", "noon\xff"}
	for _, g := range groups {
		texts = append(texts, g.Memory)
		for _, a := range g.Answers {
			texts = append(texts, a.Q)
		}
	}
	for _, u := range unrelated {
		texts = append(texts, u.Q)
	}
	checked := 0
	check := func(s string) {
		if got, want := holdsTime(s), timeWordRE.MatchString(s); got != want {
			t.Fatalf("holdsTime(%q) = %v, the expression says %v", s, got, want)
		}
		if got, want := holdsName(s), nameRE.MatchString(s); got != want {
			t.Fatalf("holdsName(%q) = %v, the expression says %v", s, got, want)
		}
		checked++
	}
	for _, s := range texts {
		check(s)
		for i := 0; i < len(s); i += 3 {
			check(s[i:])
			check(s[:i])
		}
	}
	t.Logf("%d texts read alike", checked)
}

// modelLexicon returns the dictionaries the relevance model reads, and
// skips the test without them (fails, where make test installs them).
func modelLexicon(t *testing.T) *lexicon.Lexicon {
	t.Helper()
	lx := lexicon.Default()
	if lx == nil {
		if os.Getenv("HINDSIGHT_REQUIRE_DICTS") != "" {
			t.Fatal(lexicon.Err())
		}
		t.Skip("the relevance model reads the dictionaries: make dicts")
	}
	return lx
}
