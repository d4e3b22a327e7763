package classify

import (
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"text/tabwriter"
)

// TrainOptions tune training. The zero value means the defaults.
type TrainOptions struct {
	// Epochs over the data (default 10).
	Epochs int
	// Rate is AdaGrad's learning rate (default 0.3).
	Rate float64
	// L2 is the weight decay per update (default 1e-5).
	L2 float64
	// MinCount drops features seen in fewer examples (default 2).
	MinCount int
	// Seed fixes the order of examples (default 1).
	Seed uint64
}

func (o *TrainOptions) defaults() {
	if o.Epochs == 0 {
		o.Epochs = 10
	}
	if o.Rate == 0 {
		o.Rate = 0.3
	}
	if o.L2 == 0 {
		o.L2 = 1e-5
	}
	if o.MinCount == 0 {
		o.MinCount = 2
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
}

// OptionsFor returns the training options of a role's shipped model.
// Both roles train with the defaults today; the hook is where a role
// that needs other settings gets them.
func OptionsFor(r Role, o TrainOptions) TrainOptions { return o }

// Train fits a model of labels on xs: a multinomial logistic regression,
// trained with AdaGrad on the cross-entropy with balanced class weights
// (each class weighs as much as the others in total). It is
// deterministic: the same examples and options give the same model.
func Train(name string, labels []string, xs []Example, opts TrainOptions) (*Model, error) {
	opts.defaults()
	if len(xs) == 0 {
		return nil, fmt.Errorf("train %s: no examples", name)
	}
	feats := make([][]string, len(xs))
	ys := make([]int, len(xs))
	df := map[string]int{}
	count := make([]int, len(labels))
	for i, x := range xs {
		y := slices.Index(labels, x.Label)
		if y < 0 {
			return nil, fmt.Errorf("train %s: %s:%d: label %q is not one of %v", name, x.File, x.Line, x.Label, labels)
		}
		ys[i] = y
		count[y]++
		feats[i] = Features(x.Text, x.Position)
		for _, f := range feats[i] {
			df[f]++
		}
	}
	index := map[string]int{}
	var vocab []string
	for f, n := range df {
		if n >= opts.MinCount {
			vocab = append(vocab, f)
		}
	}
	slices.Sort(vocab)
	for i, f := range vocab {
		index[f] = i
	}
	ids := make([][]int, len(xs))
	for i, fs := range feats {
		for _, f := range fs {
			if j, ok := index[f]; ok {
				ids[i] = append(ids[i], j)
			}
		}
	}
	k := len(labels)
	classWeight := make([]float64, k)
	for c := range classWeight {
		if count[c] > 0 {
			classWeight[c] = float64(len(xs)) / float64(k*count[c])
		}
	}

	w := make([]float64, len(vocab)*k)
	g2 := make([]float64, len(vocab)*k)
	bias := make([]float64, k)
	bg2 := make([]float64, k)
	order := make([]int, len(xs))
	for i := range order {
		order[i] = i
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x9e3779b97f4a7c15))
	z := make([]float64, k)
	for epoch := 0; epoch < opts.Epochs; epoch++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			copy(z, bias)
			for _, j := range ids[i] {
				for c := 0; c < k; c++ {
					z[c] += w[j*k+c]
				}
			}
			p := softmax(z)
			cw := classWeight[ys[i]]
			for c := 0; c < k; c++ {
				grad := p[c]
				if c == ys[i] {
					grad -= 1
				}
				grad *= cw
				bg2[c] += grad * grad
				bias[c] -= opts.Rate * grad / math.Sqrt(bg2[c]+1e-8)
				for _, j := range ids[i] {
					at := j*k + c
					gj := grad + opts.L2*w[at]
					g2[at] += gj * gj
					w[at] -= opts.Rate * gj / math.Sqrt(g2[at]+1e-8)
				}
			}
		}
	}
	m := &Model{Name: name, Labels: slices.Clone(labels), Features: FeatureVersion, Data: Hash(xs), Examples: len(xs),
		bias: bias, weights: map[string][]float64{}}
	for j, f := range vocab {
		ws := w[j*k : (j+1)*k]
		keep := false
		for _, v := range ws {
			if math.Abs(v) >= 0.01 {
				keep = true
			}
		}
		if keep {
			m.weights[f] = slices.Clone(ws)
		}
	}
	return m, nil
}

// Size returns how many features the model weighs.
func (m *Model) Size() int { return len(m.weights) }

// Report is how well a model's labels match held-out examples.
type Report struct {
	Name     string
	Labels   []string
	Examples int
	// Confusion[i][j] counts examples labelled Labels[i] predicted Labels[j].
	Confusion [][]int
	Mistakes  []Mistake
}

// Mistake is one held-out example the model got wrong.
type Mistake struct {
	Example
	Predicted string
	P         float64
}

// Accuracy is the share predicted right.
func (r Report) Accuracy() float64 {
	right := 0
	for i := range r.Confusion {
		right += r.Confusion[i][i]
	}
	if r.Examples == 0 {
		return 0
	}
	return float64(right) / float64(r.Examples)
}

// PrecisionRecall returns a label's precision and recall.
func (r Report) PrecisionRecall(label string) (p, rc float64) {
	i := slices.Index(r.Labels, label)
	if i < 0 {
		return 0, 0
	}
	pred, gold := 0, 0
	for j := range r.Labels {
		pred += r.Confusion[j][i]
		gold += r.Confusion[i][j]
	}
	if pred > 0 {
		p = float64(r.Confusion[i][i]) / float64(pred)
	}
	if gold > 0 {
		rc = float64(r.Confusion[i][i]) / float64(gold)
	}
	return p, rc
}

// Kept is the precision and recall of "worth keeping" (any label but the
// negative one) against "none": what the write path depends on most.
func (r Report) Kept() (p, rc float64) {
	tp, fp, fn := 0, 0, 0
	for i := range r.Labels {
		for j := range r.Labels {
			n := r.Confusion[i][j]
			switch {
			case i > 0 && j > 0:
				tp += n
			case i == 0 && j > 0:
				fp += n
			case i > 0 && j == 0:
				fn += n
			}
		}
	}
	if tp+fp > 0 {
		p = float64(tp) / float64(tp+fp)
	}
	if tp+fn > 0 {
		rc = float64(tp) / float64(tp+fn)
	}
	return p, rc
}

// Evaluate scores m on xs.
func Evaluate(m *Model, xs []Example) Report {
	r := Report{Name: m.Name, Labels: m.Labels, Examples: len(xs), Confusion: make([][]int, len(m.Labels))}
	for i := range r.Confusion {
		r.Confusion[i] = make([]int, len(m.Labels))
	}
	for _, x := range xs {
		p := m.Predict(x.Text, x.Position)
		gi, pi := slices.Index(m.Labels, x.Label), slices.Index(m.Labels, p.Label)
		if gi < 0 {
			continue
		}
		r.Confusion[gi][pi]++
		if gi != pi {
			r.Mistakes = append(r.Mistakes, Mistake{Example: x, Predicted: p.Label, P: p.P[pi]})
		}
	}
	return r
}

// CrossValidate trains on all folds but one and scores the held-out one,
// for each of k folds; messages stay whole within a fold. With byFile, a
// fold is one data file instead, which measures how the model carries over
// to domains and phrasings it was not trained on.
func CrossValidate(name string, labels []string, xs []Example, k int, byFile bool, opts TrainOptions) (Report, error) {
	foldOf := func(x Example) string {
		if byFile {
			return x.File
		}
		h := fnv.New32a()
		fmt.Fprintf(h, "%s:%d", x.File, x.Line)
		return fmt.Sprint(h.Sum32() % uint32(k))
	}
	var folds []string
	for _, x := range xs {
		if f := foldOf(x); !slices.Contains(folds, f) {
			folds = append(folds, f)
		}
	}
	slices.Sort(folds)
	total := Report{Name: name, Labels: labels, Confusion: make([][]int, len(labels))}
	for i := range total.Confusion {
		total.Confusion[i] = make([]int, len(labels))
	}
	for _, fold := range folds {
		var train, test []Example
		for _, x := range xs {
			if foldOf(x) == fold {
				test = append(test, x)
			} else {
				train = append(train, x)
			}
		}
		if len(train) == 0 || len(test) == 0 {
			continue
		}
		m, err := Train(name, labels, train, opts)
		if err != nil {
			return Report{}, err
		}
		r := Evaluate(m, test)
		total.Examples += r.Examples
		for i := range r.Confusion {
			for j := range r.Confusion[i] {
				total.Confusion[i][j] += r.Confusion[i][j]
			}
		}
		total.Mistakes = append(total.Mistakes, r.Mistakes...)
	}
	return total, nil
}

// WriteText prints the report: accuracy, kept precision and recall, per
// label precision and recall, and the confusion matrix.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	kp, kr := r.Kept()
	fmt.Fprintf(&b, "%s: %d examples, accuracy %.3f; worth keeping: precision %.3f, recall %.3f\n", r.Name, r.Examples, r.Accuracy(), kp, kr)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "label\tprecision\trecall\t")
	for _, l := range r.Labels {
		fmt.Fprintf(tw, "→%s\t", l)
	}
	fmt.Fprintln(tw)
	for i, l := range r.Labels {
		p, rc := r.PrecisionRecall(l)
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t", l, p, rc)
		for j := range r.Labels {
			fmt.Fprintf(tw, "%d\t", r.Confusion[i][j])
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}
