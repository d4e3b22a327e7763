package learn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Feature is one named input of an example and its value. The features of
// text are indicators, of value 1 (see Indicators); a score (a similarity,
// a count) is a feature with its value.
type Feature struct {
	Name  string
	Value float64
}

// Indicators returns each name as a feature of value 1. A name listed
// twice counts twice.
func Indicators(names []string) []Feature {
	fs := make([]Feature, len(names))
	for i, n := range names {
		fs[i] = Feature{Name: n, Value: 1}
	}
	return fs
}

// Example is one labelled input: its features and the index of its label
// in the labels the model is trained with.
type Example struct {
	Features []Feature
	Label    int
}

// Options tune Train. The zero value of each field means its default.
type Options struct {
	// Binary fits one weight per feature and a sigmoid that gives the
	// probability of labels[1], the positive label (there must be exactly
	// two); otherwise one weight per feature and label and a softmax.
	Binary bool
	// Epochs over the data (default 10).
	Epochs int
	// Rate is AdaGrad's learning rate (default 0.3).
	Rate float64
	// L2 is the weight decay per update (default 1e-5).
	L2 float64
	// MinCount drops features that occur fewer times in the data
	// (default 2): a feature seen once learns only its one example.
	MinCount int
	// Seed and Stream seed the PCG generator that shuffles the examples
	// each epoch (defaults 1 and 0x9e3779b97f4a7c15).
	Seed, Stream uint64
	// ClassWeights weighs each example by its label's weight, in the
	// order of the labels. Unset, the classes are balanced: each weighs as
	// much as the others in total.
	ClassWeights []float64
	// PriorBias fixes the intercept at the log odds of each label against
	// labels[0] in the (weighted) data instead of learning it, so that
	// only features move an input from the prior: one of unknown features
	// reads as most inputs do.
	PriorBias bool
	// Bags is how many fits to average, the k-th with Seed+k (default 1):
	// one fit of a sparse model moves with the order it reads the
	// examples in.
	Bags int
	// Prune drops, after each fit, the features whose every weight is
	// smaller than this in magnitude (default 0: keep all).
	Prune float64
	// Threshold is recorded in the model: the probability of the positive
	// label from which a binary model's answer is positive (0: one half).
	Threshold float64
	// Digits is how many significant digits Encode writes each weight
	// with (default 4).
	Digits int
}

func (o *Options) defaults() {
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
	if o.Stream == 0 {
		o.Stream = 0x9e3779b97f4a7c15
	}
	if o.Bags == 0 {
		o.Bags = 1
	}
	if o.Digits == 0 {
		o.Digits = 4
	}
}

// Train fits a model of labels (labels[0] is the negative class) to xs: a
// logistic regression trained with AdaGrad on the cross-entropy, each
// example weighed by its class (see Options.ClassWeights). It is
// deterministic. The caller sets the model's Name, Features and Data.
//
// Errors: no examples, a label index out of range, class weights that do
// not match the labels, or a binary model without exactly two labels or
// without examples of both.
func Train(labels []string, xs []Example, opts Options) (*Model, error) {
	opts.defaults()
	switch {
	case len(xs) == 0:
		return nil, fmt.Errorf("learn: no examples")
	case len(labels) < 2:
		return nil, fmt.Errorf("learn: %d labels, want at least two", len(labels))
	case opts.Binary && len(labels) != 2:
		return nil, fmt.Errorf("learn: a binary model has two labels, not %d", len(labels))
	case opts.ClassWeights != nil && len(opts.ClassWeights) != len(labels):
		return nil, fmt.Errorf("learn: %d class weights for %d labels", len(opts.ClassWeights), len(labels))
	}
	count := make([]int, len(labels))
	for i, x := range xs {
		if x.Label < 0 || x.Label >= len(labels) {
			return nil, fmt.Errorf("learn: example %d: label %d is not one of the %d labels", i, x.Label, len(labels))
		}
		count[x.Label]++
	}
	if opts.Binary && (count[0] == 0 || count[1] == 0) {
		return nil, fmt.Errorf("learn: a binary model needs examples of both %s and %s", labels[0], labels[1])
	}
	if opts.Bags == 1 {
		return fit(labels, xs, count, opts), nil
	}
	var avg *Model
	for b := range opts.Bags {
		o := opts
		o.Seed = opts.Seed + uint64(b)
		m := fit(labels, xs, count, o)
		if avg == nil {
			avg = m
			continue
		}
		for c := range avg.bias {
			avg.bias[c] += m.bias[c]
		}
		for f, ws := range m.weights {
			sum, ok := avg.weights[f]
			if !ok {
				sum = make([]float64, len(ws))
				avg.weights[f] = sum
			}
			for c := range ws {
				sum[c] += ws[c]
			}
		}
	}
	n := float64(opts.Bags)
	for c := range avg.bias {
		avg.bias[c] /= n
	}
	for _, ws := range avg.weights {
		for c := range ws {
			ws[c] /= n
		}
	}
	return avg, nil
}

// encoded is an example's features as vocabulary indexes and values.
type encoded struct {
	ids  []int
	vals []float64
}

// fit is one fit of Train, on checked input.
func fit(labels []string, xs []Example, count []int, opts Options) *Model {
	df := map[string]int{}
	for _, x := range xs {
		for _, f := range x.Features {
			df[f.Name]++
		}
	}
	var vocab []string
	for f, n := range df {
		if n >= opts.MinCount {
			vocab = append(vocab, f)
		}
	}
	slices.Sort(vocab)
	index := make(map[string]int, len(vocab))
	for i, f := range vocab {
		index[f] = i
	}
	enc := make([]encoded, len(xs))
	for i, x := range xs {
		for _, f := range x.Features {
			if j, ok := index[f.Name]; ok {
				enc[i].ids = append(enc[i].ids, j)
				enc[i].vals = append(enc[i].vals, f.Value)
			}
		}
	}

	k := len(labels)
	classWeight := opts.ClassWeights
	if classWeight == nil {
		classWeight = make([]float64, k)
		for c := range classWeight {
			if count[c] > 0 {
				classWeight[c] = float64(len(xs)) / float64(k*count[c])
			}
		}
	}
	// outs is how many weights a feature has: one per label, or one for
	// the positive label of a binary model.
	outs := k
	if opts.Binary {
		outs = 1
	}
	w := make([]float64, len(vocab)*outs)
	g2 := make([]float64, len(vocab)*outs)
	bias := make([]float64, outs)
	bg2 := make([]float64, outs)
	if opts.PriorBias {
		for c := range bias {
			pos := c
			if opts.Binary {
				pos = 1
			}
			bias[c] = math.Log(float64(count[pos]) * classWeight[pos] / (float64(count[0]) * classWeight[0]))
		}
	}
	order := make([]int, len(xs))
	for i := range order {
		order[i] = i
	}
	rng := rand.New(rand.NewPCG(opts.Seed, opts.Stream))
	z := make([]float64, outs)
	p := make([]float64, outs)
	for range opts.Epochs {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			x := enc[i]
			copy(z, bias)
			for t, j := range x.ids {
				for c := range outs {
					z[c] += w[j*outs+c] * x.vals[t]
				}
			}
			if opts.Binary {
				p[0] = sigmoid(z[0])
			} else {
				softmaxInto(p, z)
			}
			y := xs[i].Label
			cw := classWeight[y]
			for c := range outs {
				target := 0.0
				if opts.Binary && y == 1 || !opts.Binary && c == y {
					target = 1
				}
				grad := (p[c] - target) * cw
				if !opts.PriorBias {
					bg2[c] += grad * grad
					bias[c] -= opts.Rate * grad / math.Sqrt(bg2[c]+1e-8)
				}
				for t, j := range x.ids {
					at := j*outs + c
					gj := grad*x.vals[t] + opts.L2*w[at]
					g2[at] += gj * gj
					w[at] -= opts.Rate * gj / math.Sqrt(g2[at]+1e-8)
				}
			}
		}
	}
	m := &Model{Labels: slices.Clone(labels), Binary: opts.Binary, Examples: len(xs), Threshold: opts.Threshold,
		Digits: opts.Digits, bias: bias, weights: make(map[string][]float64, len(vocab))}
	for j, f := range vocab {
		ws := w[j*outs : (j+1)*outs]
		if slices.ContainsFunc(ws, func(v float64) bool { return math.Abs(v) >= opts.Prune }) {
			m.weights[f] = slices.Clone(ws)
		}
	}
	return m
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// softmaxInto writes the softmax of z to p.
func softmaxInto(p, z []float64) {
	mx := z[0]
	for _, v := range z {
		mx = max(mx, v)
	}
	sum := 0.0
	for k, v := range z {
		p[k] = math.Exp(v - mx)
		sum += p[k]
	}
	for k := range p {
		p[k] /= sum
	}
}
