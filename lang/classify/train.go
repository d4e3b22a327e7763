package classify

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hindsight-memory/hindsight/learn"
)

// TrainOptions tune training (see learn.Options). The zero value of a
// field means learn's default, except Prune, 0.01 here, and Digits, 4.
type TrainOptions = learn.Options

// OptionsFor returns the training options of a role's shipped model.
// Both roles train with the defaults today; the hook is where a role
// that needs other settings gets them.
func OptionsFor(r Role, o TrainOptions) TrainOptions { return o }

func options(o TrainOptions) TrainOptions {
	if o.Prune == 0 {
		o.Prune = 0.01
	}
	return o
}

// examples returns xs as the learner's examples: each sentence's features
// and the index of its label.
func examples(name string, labels []string, xs []Example) ([]learn.Example, error) {
	out := make([]learn.Example, len(xs))
	for i, x := range xs {
		y := slices.Index(labels, x.Label)
		if y < 0 {
			return nil, fmt.Errorf("train %s: %s:%d: label %q is not one of %v", name, x.File, x.Line, x.Label, labels)
		}
		out[i] = learn.Example{Features: learn.Indicators(Features(x.Text, x.Position)), Label: y}
	}
	return out, nil
}

// Train fits a model of labels on xs: a multinomial logistic regression,
// trained with AdaGrad on the cross-entropy with balanced class weights
// (each class weighs as much as the others in total; see learn.Train). It
// is deterministic: the same examples and options give the same model.
func Train(name string, labels []string, xs []Example, opts TrainOptions) (*Model, error) {
	if len(xs) == 0 {
		return nil, fmt.Errorf("train %s: no examples", name)
	}
	lx, err := examples(name, labels, xs)
	if err != nil {
		return nil, err
	}
	m, err := learn.Train(labels, lx, options(opts))
	if err != nil {
		return nil, fmt.Errorf("train %s: %w", name, err)
	}
	m.Name, m.Features, m.Data = name, FeatureVersion, Hash(xs)
	return &Model{m}, nil
}

// Report is how well a model's labels match held-out examples.
type Report struct {
	Name     string
	Labels   []string
	Examples int
	// Confusion counts examples by label and predicted label.
	Confusion learn.Confusion
	Mistakes  []Mistake
}

// Mistake is one held-out example the model got wrong.
type Mistake struct {
	Example
	Predicted string
	P         float64
}

// Accuracy is the share predicted right.
func (r Report) Accuracy() float64 { return r.Confusion.Accuracy() }

// PrecisionRecall returns a label's precision and recall.
func (r Report) PrecisionRecall(label string) (p, rc float64) {
	i := slices.Index(r.Labels, label)
	if i < 0 {
		return 0, 0
	}
	return r.Confusion.PrecisionRecall(i)
}

// Kept is the precision and recall of "worth keeping" (any label but the
// negative one) against "none": what the write path depends on most.
func (r Report) Kept() (p, rc float64) { return r.Confusion.Positive() }

// report is the Report of held-out results on xs.
func report(name string, labels []string, xs []Example, c learn.Confusion, results []learn.Result) Report {
	r := Report{Name: name, Labels: labels, Examples: c.Total(), Confusion: c}
	for _, res := range results {
		x := xs[res.Index]
		if pi := learn.Best(res.P); labels[pi] != x.Label {
			r.Mistakes = append(r.Mistakes, Mistake{Example: x, Predicted: labels[pi], P: res.P[pi]})
		}
	}
	return r
}

// Evaluate scores m on xs.
func Evaluate(m *Model, xs []Example) Report {
	c := learn.NewConfusion(m.Labels)
	var results []learn.Result
	for i, x := range xs {
		p := m.Predict(x.Text, x.Position)
		gi := slices.Index(m.Labels, x.Label)
		if gi < 0 {
			continue
		}
		c.Add(gi, learn.Best(p.P))
		results = append(results, learn.Result{Index: i, P: p.P})
	}
	return report(m.Name, m.Labels, xs, c, results)
}

// CrossValidate trains on all folds but one and scores the held-out one,
// for each of k folds; messages stay whole within a fold. With byFile, a
// fold is one data file instead, which measures how the model carries over
// to domains and phrasings it was not trained on.
func CrossValidate(name string, labels []string, xs []Example, k int, byFile bool, opts TrainOptions) (Report, error) {
	lx, err := examples(name, labels, xs)
	if err != nil {
		return Report{}, err
	}
	foldOf := func(i int) string {
		if byFile {
			return xs[i].File
		}
		return fmt.Sprint(learn.Fold(fmt.Sprintf("%s:%d", xs[i].File, xs[i].Line), k))
	}
	c, results, err := learn.CrossValidate(labels, lx, foldOf, options(opts))
	if err != nil {
		return Report{}, fmt.Errorf("cross-validate %s: %w", name, err)
	}
	return report(name, labels, xs, c, results), nil
}

// WriteText prints the report: accuracy, kept precision and recall, per
// label precision and recall, and the confusion matrix.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	kp, kr := r.Kept()
	fmt.Fprintf(&b, "%s: %d examples, accuracy %.3f; worth keeping: precision %.3f, recall %.3f\n", r.Name, r.Examples, r.Accuracy(), kp, kr)
	if err := r.Confusion.WriteTable(&b); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}
