package recall

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	iofs "io/fs"
	"path"
	"slices"
	"strings"

	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/lang/lexicon"
	"github.com/hindsight-memory/hindsight/learn"
	"github.com/hindsight-memory/hindsight/memory"
)

// RelevanceGroup is one memory of the relevance data (recall/data) and
// the queries labelled against it: answers it gives (paraphrases, tasks
// it applies to, questions in the other language) and near misses that
// share its words but that it does not answer.
type RelevanceGroup struct {
	ID      string           `json:"id"`
	Lang    string           `json:"lang"`
	Kind    memory.Kind      `json:"kind"`
	Memory  string           `json:"memory"`
	Answers []RelevanceQuery `json:"answers"`
	Misses  []RelevanceQuery `json:"misses"`
	File    string           `json:"-"`
}

// RelevanceQuery is a labelled query and its type.
type RelevanceQuery struct {
	Q    string `json:"q"`
	Type string `json:"type"`
}

// Unrelated is a query no memory of the data answers.
type Unrelated struct {
	ID   string `json:"id"`
	Lang string `json:"lang"`
	Q    string `json:"q"`
}

// LoadRelevanceData reads the groups (rel_*.jsonl) and unrelated queries
// (unrelated_*.jsonl) in dir of fsys.
func LoadRelevanceData(fsys iofs.FS, dir string) ([]RelevanceGroup, []Unrelated, error) {
	names, err := iofs.Glob(fsys, path.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(names)
	var groups []RelevanceGroup
	var unrelated []Unrelated
	for _, name := range names {
		f, err := fsys.Open(name)
		if err != nil {
			return nil, nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<16), 1<<22)
		base := path.Base(name)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			var err error
			if strings.HasPrefix(base, "unrelated") {
				var u Unrelated
				err = json.Unmarshal([]byte(line), &u)
				unrelated = append(unrelated, u)
			} else {
				var g RelevanceGroup
				err = json.Unmarshal([]byte(line), &g)
				g.File = base
				if err == nil && (g.Memory == "" || len(g.Answers) == 0 || !g.Kind.Valid()) {
					err = fmt.Errorf("a group needs a memory, a kind and answers")
				}
				groups = append(groups, g)
			}
			if err != nil {
				f.Close()
				return nil, nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, nil, err
		}
	}
	return groups, unrelated, nil
}

// relPair is one labelled (query, memory) pair, with the key its held-out
// fold is drawn by and what it tests (answer types, nearmiss, other,
// unrelated).
type relPair struct {
	q, memory string
	kind      memory.Kind
	relevant  bool
	fold, typ string
}

// relevancePairs makes the labelled pairs of the data: each group's
// answers and misses against its memory, each answer also against the
// memory of another group of another file (an easy negative), and each
// unrelated query against three memories. Pairs are drawn
// deterministically.
func relevancePairs(groups []RelevanceGroup, unrelated []Unrelated) []relPair {
	var out []relPair
	other := func(key string, not string) RelevanceGroup {
		for i := 0; ; i++ {
			g := groups[learn.Fold(fmt.Sprint(key, "/", i), len(groups))]
			if g.File != not || i > 10 {
				return g
			}
		}
	}
	for _, g := range groups {
		for _, a := range g.Answers {
			out = append(out, relPair{q: a.Q, memory: g.Memory, kind: g.Kind, relevant: true, fold: g.ID, typ: a.Type})
			o := other(a.Q, g.File)
			out = append(out, relPair{q: a.Q, memory: o.Memory, kind: o.Kind, fold: g.ID, typ: "other"})
		}
		for _, m := range g.Misses {
			out = append(out, relPair{q: m.Q, memory: g.Memory, kind: g.Kind, fold: g.ID, typ: "nearmiss"})
		}
	}
	for _, u := range unrelated {
		for i := range 3 {
			o := groups[learn.Fold(fmt.Sprint(u.ID, "/", i), len(groups))]
			out = append(out, relPair{q: u.Q, memory: o.Memory, kind: o.Kind, fold: u.ID, typ: "unrelated"})
		}
	}
	return out
}

// relMinPrecision is the held-out precision of what the model admits at
// its threshold.
const relMinPrecision = 0.8

// relOtherWeight is how much a pair of unrelated texts weighs in
// training against a near miss or an answer.
const relOtherWeight = 4

// relHeldOut says whether a pair's fold key is in the held-out split: one
// fifth of the groups (with all their pairs) and of the unrelated
// queries.
func relHeldOut(fold string) bool { return learn.Fold(fold, 5) == 0 }

// pairFeatures computes a pair's features as recall would, in a tenant
// small enough that the rule relevance's IDF is its prior's.
func pairFeatures(p relPair, lx *lexicon.Lexicon, profiles map[string]*relProfile) []learn.Feature {
	prof := func(s string) *relProfile {
		if pr, ok := profiles[s]; ok {
			return pr
		}
		pr := profileOf(s, lx)
		profiles[s] = pr
		return pr
	}
	rq := relevanceTerms(p.q, lx, expandQuery(lx, p.q))
	rule := coverageOf(rq, indexTerms(p.memory), 0, func(string) int64 { return 0 })
	return relFeatures(p.q, prof(p.q), prof(p.memory), rule, p.kind, lx)
}

// addPair adds a pair to a data hash.
func addPair(h *learn.DataHash, p relPair) {
	h.Add(p.q, p.memory, string(p.kind), fmt.Sprint(p.relevant), p.typ)
}

// RelevanceDataHash is the hash of the labelled pairs the data makes, as
// a model trained on it records (learn.Model.Data).
func RelevanceDataHash(groups []RelevanceGroup, unrelated []Unrelated) string {
	h := learn.NewDataHash()
	for _, p := range relevancePairs(groups, unrelated) {
		addPair(h, p)
	}
	return h.Sum()
}

// RelevanceReport is what training the relevance model measured on its
// held-out split.
type RelevanceReport struct {
	Train, Test int
	Threshold   float64
	Precision   float64
	Recall      float64
	// ByType is the held-out share of each pair type on the right side
	// of the threshold (answers above it, negatives below).
	ByType map[string][2]int
	// ByTypeRule is the same for the rule alone.
	ByTypeRule map[string][2]int
	// Added counts the held-out pairs the rule rejects and the model
	// admits: answers, and others.
	Added [2]int
	Curve []learn.PRPoint
}

// TrainRelevance fits the relevance model to the data's pairs it is asked
// about (relAsked), chooses its threshold on their held-out split (the
// lowest that keeps relMinPrecision), and refits on everything with that
// threshold. The report scores the whole decision, rule and model, on
// every held-out pair. lx should be
// the lexicon recall will run with.
func TrainRelevance(groups []RelevanceGroup, unrelated []Unrelated, lx *lexicon.Lexicon, opts learn.Options) (*learn.Model, RelevanceReport, error) {
	pairs := relevancePairs(groups, unrelated)
	profiles := map[string]*relProfile{}
	var train, test, all []learn.Example
	var testPairs []relPair
	var testRule []float64
	h := learn.NewDataHash()
	// weighed is x as many times as it weighs: a memory with nothing to
	// do with the query must score low whatever it shares by chance (a
	// tenant holds many such for each query, and one above the threshold
	// answers a question nothing answers), so those weigh relOtherWeight
	// times.
	weighed := func(p relPair, x learn.Example) []learn.Example {
		n := 1
		if p.typ == "other" || p.typ == "unrelated" {
			n = relOtherWeight
		}
		return slices.Repeat([]learn.Example{x}, n)
	}
	for _, p := range pairs {
		label := 0
		if p.relevant {
			label = 1
		}
		addPair(h, p)
		x := learn.Example{Features: pairFeatures(p, lx, profiles), Label: label}
		rule := 0.0
		if x.Features != nil {
			rule = x.Features[1].Value
		}
		if !relAsked(x.Features) {
			x.Features = nil // the rule decides: the model is not asked
		}
		if x.Features != nil {
			all = append(all, weighed(p, x)...)
		}
		if relHeldOut(p.fold) {
			// Pairs with no evidence stay in the held-out split, scored 0.
			test, testPairs, testRule = append(test, x), append(testPairs, p), append(testRule, rule)
		} else if x.Features != nil {
			train = append(train, weighed(p, x)...)
		}
	}
	labels := []string{"irrelevant", "relevant"}
	opts.Binary = true
	m, err := learn.Train(labels, train, opts)
	if err != nil {
		return nil, RelevanceReport{}, err
	}
	rep := RelevanceReport{Train: len(train), Test: len(test), ByType: map[string][2]int{}, ByTypeRule: map[string][2]int{}}
	scores := make([]float64, len(test))
	positive := make([]bool, len(test))
	for i, x := range test {
		if x.Features != nil {
			scores[i] = m.Score(x.Features)
		}
		positive[i] = x.Label == 1
	}
	// The curve is over the pairs the model is asked about; its
	// threshold is the lowest at which what it admits is right
	// relMinPrecision of the time (a memory it admits is returned as
	// relevant).
	var asked []float64
	var askedPos []bool
	for i, x := range test {
		if x.Features != nil {
			asked, askedPos = append(asked, scores[i]), append(askedPos, positive[i])
		}
	}
	rep.Curve = learn.PRCurve(asked, askedPos)
	rep.Threshold = 1
	for _, pt := range rep.Curve {
		if pt.Precision >= relMinPrecision {
			rep.Threshold, rep.Precision, rep.Recall = pt.Threshold, pt.Precision, pt.Recall
		}
	}
	for i, p := range testPairs {
		c := rep.ByType[p.typ]
		c[1]++
		relevant := testRule[i] >= DefaultMinRelevance || test[i].Features != nil && scores[i] >= rep.Threshold
		if relevant == p.relevant {
			c[0]++
		}
		rep.ByType[p.typ] = c
		if testRule[i] < DefaultMinRelevance && test[i].Features != nil && scores[i] >= rep.Threshold {
			if p.relevant {
				rep.Added[0]++
			} else {
				rep.Added[1]++
			}
		}
		r := rep.ByTypeRule[p.typ]
		if (testRule[i] >= DefaultMinRelevance) == p.relevant {
			r[0]++
		}
		r[1]++
		rep.ByTypeRule[p.typ] = r
	}
	opts.Threshold = rep.Threshold
	final, err := learn.Train(labels, all, opts)
	if err != nil {
		return nil, rep, err
	}
	final.Name, final.Features, final.Data = "relevance", relFeatureVersion, h.Sum()
	return final, rep, nil
}

// WriteText prints the report: sizes, the threshold, precision and
// recall at it, the share right per pair type, and the curve.
func (r RelevanceReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "relevance: %d training pairs, %d held out; the model's threshold %.3f: what it admits is right %.3f of the time, and it admits %.3f of the answers it is asked about\n", r.Train, r.Test, r.Threshold, r.Precision, r.Recall)
	fmt.Fprintf(w, "  of the held-out pairs the rule rejects, the model admits %d answers and %d others\n", r.Added[0], r.Added[1])
	fmt.Fprintln(w, "  held-out pairs right, by type: rule and model | the rule alone")
	types := make([]string, 0, len(r.ByType))
	for t := range r.ByType {
		types = append(types, t)
	}
	slices.Sort(types)
	for _, t := range types {
		c, u := r.ByType[t], r.ByTypeRule[t]
		fmt.Fprintf(w, "  %-10s %4d/%-4d %.3f | %.3f\n", t, c[0], c[1], float64(c[0])/float64(max(1, c[1])), float64(u[0])/float64(max(1, u[1])))
	}
}

// WriteCurve prints the held-out precision/recall curve, a point per
// hundredth of recall.
func (r RelevanceReport) WriteCurve(w io.Writer) {
	fmt.Fprintln(w, "# held-out precision and recall of the relevance model by threshold")
	fmt.Fprintln(w, "threshold\tprecision\trecall")
	last := -1
	for _, pt := range r.Curve {
		if step := int(pt.Recall * 100); step != last {
			last = step
			fmt.Fprintf(w, "%.4f\t%.4f\t%.4f\n", pt.Threshold, pt.Precision, pt.Recall)
		}
	}
}

// indexTerms are the distinct index terms of a text, as the keyword index
// keeps a document's.
func indexTerms(text string) []string {
	ts := lang.Terms(text)
	slices.Sort(ts)
	return slices.Compact(ts)
}
