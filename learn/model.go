package learn

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Model is a trained logistic regression over named features.
type Model struct {
	// Name names the model ("user", "inject").
	Name string
	// Labels are the classes; Labels[0] is the negative class, and
	// Labels[1] the positive class of a binary model.
	Labels []string
	// Binary says the model has one weight per feature and a sigmoid for
	// the probability of Labels[1]; otherwise one weight per feature and
	// label and a softmax.
	Binary bool
	// Features names the version of the features the model was trained on
	// (the caller's: a model means nothing to other features).
	Features string
	// Data is the DataHash of the training examples.
	Data string
	// Examples is how many examples it was trained on.
	Examples int
	// Threshold is the probability of the positive label from which a
	// binary model's answer is positive (see Positive); 0 means one half.
	Threshold float64
	// Digits is how many significant digits Encode writes a weight with.
	Digits int

	bias    []float64
	weights map[string][]float64
}

// Size returns how many features the model weighs.
func (m *Model) Size() int { return len(m.weights) }

// logits returns the model's linear scores of x: one per label, or one for
// the positive label of a binary model.
func (m *Model) logits(x []Feature) []float64 {
	z := slices.Clone(m.bias)
	for _, f := range x {
		if w, ok := m.weights[f.Name]; ok {
			for c := range z {
				z[c] += w[c] * f.Value
			}
		}
	}
	return z
}

// Predict returns the probability of each label for x, in the order of
// m.Labels. Features the model does not know weigh nothing.
func (m *Model) Predict(x []Feature) []float64 {
	z := m.logits(x)
	if m.Binary {
		p := sigmoid(z[0])
		return []float64{1 - p, p}
	}
	p := make([]float64, len(z))
	softmaxInto(p, z)
	return p
}

// Score returns the probability of the positive label, Labels[1]. For a
// binary model it is computed straight from the sigmoid, without the
// rounding of 1-(1-p).
func (m *Model) Score(x []Feature) float64 {
	if m.Binary {
		return sigmoid(m.logits(x)[0])
	}
	return m.Predict(x)[1]
}

// Positive reports whether a binary model's score of x reaches its
// Threshold.
func (m *Model) Positive(x []Feature) bool { return m.Score(x) >= m.threshold() }

func (m *Model) threshold() float64 {
	if m.Threshold == 0 {
		return 0.5
	}
	return m.Threshold
}

// Label returns the label a model answers for probabilities p (from
// Predict): for a binary model the positive one when its probability
// reaches the Threshold, otherwise the most probable (see Best).
func (m *Model) Label(p []float64) int {
	if m.Binary {
		if p[1] >= m.threshold() {
			return 1
		}
		return 0
	}
	return Best(p)
}

// Best returns the index of the highest probability in p, the first of
// equal ones: the predicted label.
func Best(p []float64) int {
	best := 0
	for k := range p {
		if p[k] > p[best] {
			best = k
		}
	}
	return best
}

// Contribution is one feature's pull towards a label.
type Contribution struct {
	Feature string
	Weight  float64
}

// Explain lists the features of x that pull most towards the label of
// index label, strongest either way first, at most n: what a person reads
// to see why an input was labelled so. A feature's pull is its weight times
// its value, for a multinomial model less the mean of the other labels'.
func (m *Model) Explain(x []Feature, label, n int) []Contribution {
	if label < 0 || label >= len(m.Labels) {
		return nil
	}
	var out []Contribution
	for _, f := range x {
		w, ok := m.weights[f.Name]
		if !ok {
			continue
		}
		var pull float64
		switch {
		case m.Binary && label == 1:
			pull = w[0]
		case m.Binary:
			pull = -w[0]
		default:
			rest := 0.0
			for j, v := range w {
				if j != label {
					rest += v
				}
			}
			pull = w[label] - rest/float64(len(w)-1)
		}
		out = append(out, Contribution{f.Name, pull * f.Value})
	}
	slices.SortFunc(out, func(a, b Contribution) int {
		switch {
		case math.Abs(a.Weight) > math.Abs(b.Weight):
			return -1
		case math.Abs(a.Weight) < math.Abs(b.Weight):
			return 1
		}
		return strings.Compare(a.Feature, b.Feature)
	})
	return out[:min(n, len(out))]
}

const header = "hindsight-model v1"

// Encode writes the model as gzipped text: a header line, one line per
// property (name, labels, link, features, data, examples, threshold,
// digits, bias), then one line per feature, in order, with its weights
// separated by spaces after a tab. The output depends only on the model,
// so a retrain on the same data gives the same bytes.
func (m *Model) Encode(w io.Writer) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	digits := m.Digits
	if digits == 0 {
		digits = 4
	}
	link := "softmax"
	if m.Binary {
		link = "sigmoid"
	}
	bw := bufio.NewWriter(zw)
	fmt.Fprintf(bw, "%s\nname %s\nlabels %s\nlink %s\nfeatures %s\ndata %s\nexamples %d\n", header, m.Name,
		strings.Join(m.Labels, " "), link, m.Features, m.Data, m.Examples)
	if m.Threshold != 0 {
		fmt.Fprintf(bw, "threshold %s\n", strconv.FormatFloat(m.Threshold, 'g', -1, 64))
	}
	fmt.Fprintf(bw, "digits %d\nbias %s\n", digits, formatWeights(m.bias, digits))
	keys := make([]string, 0, len(m.weights))
	for f := range m.weights {
		keys = append(keys, f)
	}
	slices.Sort(keys)
	for _, f := range keys {
		fmt.Fprintf(bw, "%s\t%s\n", f, formatWeights(m.weights[f], digits))
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

func formatWeights(ws []float64, digits int) string {
	parts := make([]string, len(ws))
	for i, v := range ws {
		parts[i] = strconv.FormatFloat(v, 'g', digits, 64)
	}
	return strings.Join(parts, " ")
}

// Decode reads a model written by Encode. Errors: not a model file, a
// malformed line, fewer than two labels, or no bias. Whether the model's
// Features are the ones the caller computes is the caller's to check.
func Decode(r io.Reader) (*Model, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("learn: model: %w", err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("learn: model: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	m := &Model{weights: map[string][]float64{}}
	outs := func() int {
		if m.Binary {
			return 1
		}
		return len(m.Labels)
	}
	line := 0
	for sc.Scan() {
		line++
		t := sc.Text()
		if line == 1 {
			if t != header {
				return nil, fmt.Errorf("learn: not a model file (header %q)", t)
			}
			continue
		}
		if f, ws, ok := strings.Cut(t, "\t"); ok {
			v, err := parseWeights(ws, outs())
			if err != nil {
				return nil, fmt.Errorf("learn: model %s: line %d: %w", m.Name, line, err)
			}
			m.weights[f] = v
			continue
		}
		key, val, _ := strings.Cut(t, " ")
		switch key {
		case "name":
			m.Name = val
		case "labels":
			m.Labels = strings.Fields(val)
		case "link":
			switch val {
			case "sigmoid":
				m.Binary = true
			case "softmax":
			default:
				return nil, fmt.Errorf("learn: model %s: link %q is not sigmoid or softmax", m.Name, val)
			}
		case "features":
			m.Features = val
		case "data":
			m.Data = val
		case "examples":
			m.Examples, err = strconv.Atoi(val)
		case "threshold":
			m.Threshold, err = strconv.ParseFloat(val, 64)
		case "digits":
			m.Digits, err = strconv.Atoi(val)
		case "bias":
			m.bias, err = parseWeights(val, outs())
		default:
			err = fmt.Errorf("unknown key %q", key)
		}
		if err != nil {
			return nil, fmt.Errorf("learn: model %s: line %d: %w", m.Name, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("learn: model: %w", err)
	}
	switch {
	case len(m.Labels) < 2:
		return nil, fmt.Errorf("learn: model %s: fewer than two labels", m.Name)
	case m.Binary && len(m.Labels) != 2:
		return nil, fmt.Errorf("learn: model %s: a sigmoid model has two labels, not %d", m.Name, len(m.Labels))
	case m.bias == nil:
		return nil, fmt.Errorf("learn: model %s: no bias", m.Name)
	}
	return m, nil
}

func parseWeights(s string, n int) ([]float64, error) {
	fs := strings.Fields(s)
	if len(fs) != n {
		return nil, fmt.Errorf("%d weights, want %d", len(fs), n)
	}
	out := make([]float64, n)
	for i, f := range fs {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
