package merge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/hindsight-memory/hindsight/memory"
)

// Pair is one labelled example of the merge evaluation set: an existing
// memory, a later candidate of the same kind, and the verdict a careful
// reader gives.
type Pair struct {
	ID        string         `json:"id"`
	Lang      string         `json:"lang"`
	Kind      memory.Kind    `json:"kind"`
	Existing  string         `json:"existing"`
	Candidate string         `json:"candidate"`
	Label     memory.Verdict `json:"label"`
	Note      string         `json:"note,omitempty"`
	// Similarity is the embedding similarity of the two texts, filled in by
	// ScorePairs; nil when not scored.
	Similarity *float64 `json:"similarity,omitempty"`
}

// LoadPairs reads a labelled set: JSON Lines, one Pair per line; blank lines
// and lines starting with '#' are skipped. Every pair needs an ID, a valid
// kind and label, and both texts; IDs must be unique.
func LoadPairs(path string) ([]Pair, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("merge: load pairs: %w", err)
	}
	defer f.Close()
	pairs, err := ReadPairs(f)
	if err != nil {
		return nil, fmt.Errorf("merge: load pairs from %s: %w", path, err)
	}
	return pairs, nil
}

// ReadPairs parses a labelled set from r; see LoadPairs.
func ReadPairs(r io.Reader) ([]Pair, error) {
	const op = "merge: read pairs"
	var pairs []Pair
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		var p Pair
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return nil, memory.Invalidf(op, "line %d: %v", line, err)
		}
		switch {
		case p.ID == "":
			return nil, memory.Invalidf(op, "line %d: id is required", line)
		case !p.Kind.Valid():
			return nil, memory.Invalidf(op, "line %d (%s): kind %q is not one of preference, lesson, fact, rule", line, p.ID, p.Kind)
		case !p.Label.Valid():
			return nil, memory.Invalidf(op, "line %d (%s): label %q is not one of duplicate, refines, conflicts, distinct", line, p.ID, p.Label)
		case strings.TrimSpace(p.Existing) == "" || strings.TrimSpace(p.Candidate) == "":
			return nil, memory.Invalidf(op, "line %d (%s): existing and candidate texts are required", line, p.ID)
		}
		if prev, dup := seen[p.ID]; dup {
			return nil, memory.Invalidf(op, "line %d: id %s already used on line %d", line, p.ID, prev)
		}
		seen[p.ID] = line
		pairs = append(pairs, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if len(pairs) == 0 {
		return nil, memory.Invalidf(op, "no pairs")
	}
	return pairs, nil
}

// ScorePairs fills in each pair's Similarity: the cosine similarity of the
// embeddings of its two texts. It is how the vector pre-filter's threshold
// is calibrated for an embedder (see Report.Similarity and SuggestThreshold).
func ScorePairs(ctx context.Context, e memory.Embedder, pairs []Pair) error {
	texts := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		texts = append(texts, p.Existing, p.Candidate)
	}
	vs, err := e.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("merge: score pairs with %s: %w", e.Model(), err)
	}
	if len(vs) != len(texts) {
		return fmt.Errorf("merge: score pairs with %s: %d vectors for %d texts", e.Model(), len(vs), len(texts))
	}
	for i := range pairs {
		s := math.Round(memory.Cosine(vs[2*i], vs[2*i+1])*1000) / 1000
		pairs[i].Similarity = &s
	}
	return nil
}

// VerdictScore is precision and recall of one verdict.
type VerdictScore struct {
	Verdict   memory.Verdict `json:"verdict"`
	Support   int            `json:"support"`   // pairs labelled with it
	Predicted int            `json:"predicted"` // pairs the judge gave it
	Correct   int            `json:"correct"`
	// Precision is Correct/Predicted (0 when nothing was predicted);
	// Recall is Correct/Support (0 when no pair has the label).
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// Outcome is the judge's answer on one pair.
type Outcome struct {
	ID         string         `json:"id"`
	Lang       string         `json:"lang"`
	Label      memory.Verdict `json:"label"`
	Got        memory.Verdict `json:"got"`
	Reason     string         `json:"reason"`
	Error      string         `json:"error,omitempty"`
	Existing   string         `json:"existing"`
	Candidate  string         `json:"candidate"`
	Similarity *float64       `json:"similarity,omitempty"`
}

// SimilarityStats summarises the embedding similarity of the pairs with
// one label.
type SimilarityStats struct {
	Label  memory.Verdict `json:"label"`
	N      int            `json:"n"`
	Min    float64        `json:"min"`
	P10    float64        `json:"p10"`
	Median float64        `json:"median"`
	Max    float64        `json:"max"`
}

// Report is the result of evaluating a judge on a labelled set.
type Report struct {
	Judge         string  `json:"judge"`
	Model         string  `json:"model,omitempty"`
	PromptVersion string  `json:"prompt_version,omitempty"`
	Pairs         int     `json:"pairs"`
	Correct       int     `json:"correct"`
	Accuracy      float64 `json:"accuracy"`
	// MergedDistinct counts distinct pairs the judge merged (duplicate or
	// refines): the mistake that loses information. It must be zero.
	MergedDistinct int            `json:"merged_distinct"`
	Errors         int            `json:"errors"` // judge calls that failed (counted as wrong)
	PerVerdict     []VerdictScore `json:"per_verdict"`
	// Confusion[label][got] counts pairs, in the order of Verdicts.
	Confusion  [][]int            `json:"confusion"`
	ByLang     map[string]float64 `json:"accuracy_by_lang"`
	Similarity []SimilarityStats  `json:"similarity,omitempty"`
	Mistakes   []Outcome          `json:"mistakes"`
	Outcomes   []Outcome          `json:"-"`
}

// Verdicts lists the verdicts in report order.
var Verdicts = []memory.Verdict{memory.VerdictDuplicate, memory.VerdictRefines, memory.VerdictConflicts, memory.VerdictDistinct}

// Evaluate runs judge on every pair (the existing text as the only
// neighbour, with ID "existing-<pair id>" and the pair's similarity or 1)
// and scores its verdicts. A
// failed judge call counts as a wrong answer and is listed among the
// mistakes; only a cancelled context stops the run.
func Evaluate(ctx context.Context, judge memory.Judge, pairs []Pair) (Report, error) {
	rep := Report{Pairs: len(pairs), ByLang: map[string]float64{}}
	idx := map[memory.Verdict]int{}
	for i, v := range Verdicts {
		idx[v] = i
	}
	rep.Confusion = make([][]int, len(Verdicts))
	for i := range rep.Confusion {
		rep.Confusion[i] = make([]int, len(Verdicts))
	}
	scores := make([]VerdictScore, len(Verdicts))
	for i, v := range Verdicts {
		scores[i].Verdict = v
	}
	langTotal, langCorrect := map[string]int{}, map[string]int{}
	for _, p := range pairs {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		sim := 1.0
		if p.Similarity != nil {
			sim = *p.Similarity
		}
		existing := memory.Memory{ID: "existing-" + p.ID, Kind: p.Kind, Content: p.Existing, Status: memory.StatusLive}
		c := memory.Candidate{Kind: p.Kind, Content: p.Candidate}
		j, err := judge.Judge(ctx, c, []memory.Neighbor{{Memory: existing, Similarity: sim}})
		o := Outcome{ID: p.ID, Lang: p.Lang, Label: p.Label, Got: j.Verdict, Reason: j.Reason,
			Existing: p.Existing, Candidate: p.Candidate, Similarity: p.Similarity}
		if err != nil {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			o.Got, o.Error = "", err.Error()
			rep.Errors++
		} else {
			rep.Judge, rep.Model, rep.PromptVersion = j.Judge, j.Model, j.PromptVersion
		}
		rep.Outcomes = append(rep.Outcomes, o)
		langTotal[p.Lang]++
		scores[idx[p.Label]].Support++
		if gi, ok := idx[o.Got]; ok {
			scores[gi].Predicted++
			rep.Confusion[idx[p.Label]][gi]++
		}
		if o.Got == p.Label {
			rep.Correct++
			langCorrect[p.Lang]++
			scores[idx[p.Label]].Correct++
			continue
		}
		if p.Label == memory.VerdictDistinct && (o.Got == memory.VerdictDuplicate || o.Got == memory.VerdictRefines) {
			rep.MergedDistinct++
		}
		rep.Mistakes = append(rep.Mistakes, o)
	}
	for i := range scores {
		s := &scores[i]
		if s.Predicted > 0 {
			s.Precision = round3(float64(s.Correct) / float64(s.Predicted))
		}
		if s.Support > 0 {
			s.Recall = round3(float64(s.Correct) / float64(s.Support))
		}
		if s.Precision+s.Recall > 0 {
			s.F1 = round3(2 * s.Precision * s.Recall / (s.Precision + s.Recall))
		}
	}
	rep.PerVerdict = scores
	if len(pairs) > 0 {
		rep.Accuracy = round3(float64(rep.Correct) / float64(len(pairs)))
	}
	for l, n := range langTotal {
		rep.ByLang[l] = round3(float64(langCorrect[l]) / float64(n))
	}
	rep.Similarity = similarityStats(pairs)
	return rep, nil
}

// Score returns the score of verdict v.
func (r Report) Score(v memory.Verdict) VerdictScore {
	for _, s := range r.PerVerdict {
		if s.Verdict == v {
			return s
		}
	}
	return VerdictScore{Verdict: v}
}

func similarityStats(pairs []Pair) []SimilarityStats {
	by := map[memory.Verdict][]float64{}
	for _, p := range pairs {
		if p.Similarity != nil {
			by[p.Label] = append(by[p.Label], *p.Similarity)
		}
	}
	if len(by) == 0 {
		return nil
	}
	var out []SimilarityStats
	for _, v := range Verdicts {
		xs := by[v]
		if len(xs) == 0 {
			continue
		}
		sort.Float64s(xs)
		out = append(out, SimilarityStats{Label: v, N: len(xs), Min: xs[0], P10: quantile(xs, 0.1), Median: quantile(xs, 0.5), Max: xs[len(xs)-1]})
	}
	return out
}

// quantile of sorted xs, by the nearest-rank method.
func quantile(xs []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[max(0, min(i, len(xs)-1))]
}

// SuggestThreshold returns the highest pre-filter threshold that still
// lets at least minRecall of the pairs a judge should merge (every label
// but distinct) through to the judge, rounded down to 0.01, and the share
// of distinct pairs that would also reach the judge. Pairs must have been
// scored with ScorePairs.
func SuggestThreshold(pairs []Pair, minRecall float64) (threshold, distinctPassing float64, err error) {
	var merge, distinct []float64
	for _, p := range pairs {
		if p.Similarity == nil {
			return 0, 0, memory.Invalidf("merge: suggest threshold", "pair %s has no similarity: run ScorePairs first", p.ID)
		}
		if p.Label == memory.VerdictDistinct {
			distinct = append(distinct, *p.Similarity)
		} else {
			merge = append(merge, *p.Similarity)
		}
	}
	if len(merge) == 0 {
		return 0, 0, memory.Invalidf("merge: suggest threshold", "no pair labelled duplicate, refines or conflicts")
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(merge)))
	keep := int(math.Ceil(minRecall * float64(len(merge))))
	keep = max(1, min(keep, len(merge)))
	threshold = math.Floor(merge[keep-1]*100) / 100
	n := 0
	for _, s := range distinct {
		if s >= threshold {
			n++
		}
	}
	if len(distinct) > 0 {
		distinctPassing = round3(float64(n) / float64(len(distinct)))
	}
	return threshold, distinctPassing, nil
}

// WriteTable prints the report for people: per-verdict precision and
// recall, the confusion matrix, accuracy, the similarity distribution when
// known, and every mistake with the judge's reason.
func (r Report) WriteTable(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "judge %s", r.Judge)
	if r.Model != "" && r.Model != r.Judge {
		fmt.Fprintf(&b, " (model %s", r.Model)
		if r.PromptVersion != "" {
			fmt.Fprintf(&b, ", prompt %s", r.PromptVersion)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, ": %d pairs, accuracy %.3f (%d correct), distinct pairs merged: %d, errors: %d\n", r.Pairs, r.Accuracy, r.Correct, r.MergedDistinct, r.Errors)
	langs := make([]string, 0, len(r.ByLang))
	for l := range r.ByLang {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	for _, l := range langs {
		fmt.Fprintf(&b, "  accuracy %s: %.3f\n", l, r.ByLang[l])
	}
	b.WriteString("\n")

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "verdict\tsupport\tpredicted\tcorrect\tprecision\trecall\tf1\t")
	for _, s := range r.PerVerdict {
		prec := "n/a"
		if s.Predicted > 0 {
			prec = fmt.Sprintf("%.3f", s.Precision)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%.3f\t%.3f\t\n", s.Verdict, s.Support, s.Predicted, s.Correct, prec, s.Recall, s.F1)
	}
	tw.Flush()

	b.WriteString("\nconfusion (rows: label, columns: judge)\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "\t")
	for _, v := range Verdicts {
		fmt.Fprintf(tw, "%s\t", v)
	}
	fmt.Fprintln(tw)
	for i, v := range Verdicts {
		fmt.Fprintf(tw, "%s\t", v)
		for j := range Verdicts {
			fmt.Fprintf(tw, "%d\t", r.Confusion[i][j])
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()

	if len(r.Similarity) > 0 {
		b.WriteString("\nembedding similarity by label\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "label\tn\tmin\tp10\tmedian\tmax\t")
		for _, s := range r.Similarity {
			fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t\n", s.Label, s.N, s.Min, s.P10, s.Median, s.Max)
		}
		tw.Flush()
	}

	if len(r.Mistakes) > 0 {
		fmt.Fprintf(&b, "\nmistakes (%d)\n", len(r.Mistakes))
		for _, m := range r.Mistakes {
			got := string(m.Got)
			if m.Error != "" {
				got = "error"
			}
			fmt.Fprintf(&b, "- %s: label %s, got %s\n    existing:  %s\n    candidate: %s\n", m.ID, m.Label, got, m.Existing, m.Candidate)
			if m.Error != "" {
				fmt.Fprintf(&b, "    error:     %s\n", m.Error)
			} else {
				fmt.Fprintf(&b, "    reason:    %s\n", m.Reason)
			}
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteJSON prints the report as one indented JSON document.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }
