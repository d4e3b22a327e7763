package classify

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

// Model is a trained multinomial logistic regression over Features.
type Model struct {
	// Name names the model ("user", "assistant").
	Name string
	// Labels are the classes; Labels[0] is the negative class ("none").
	Labels []string
	// Features is the FeatureVersion the model was trained with.
	Features string
	// Data is the Hash of the training examples.
	Data string
	// Examples is how many examples it was trained on.
	Examples int
	bias     []float64
	weights  map[string][]float64
}

// Prediction is a model's reading of one sentence.
type Prediction struct {
	// Label is the most probable class.
	Label string
	// P is the probability of each class, in the order of Model.Labels.
	P []float64
}

// Prob returns the probability of label (0 for an unknown label).
func (p Prediction) Prob(labels []string, label string) float64 {
	if i := slices.Index(labels, label); i >= 0 && i < len(p.P) {
		return p.P[i]
	}
	return 0
}

// Predict classifies one sentence at a position.
func (m *Model) Predict(sentence string, pos Position) Prediction {
	return m.predictFeatures(Features(sentence, pos))
}

func (m *Model) predictFeatures(fs []string) Prediction {
	z := slices.Clone(m.bias)
	for _, f := range fs {
		if w, ok := m.weights[f]; ok {
			for k := range z {
				z[k] += w[k]
			}
		}
	}
	p := softmax(z)
	best := 0
	for k := range p {
		if p[k] > p[best] {
			best = k
		}
	}
	return Prediction{Label: m.Labels[best], P: p}
}

// Contribution is one feature's pull towards a label.
type Contribution struct {
	Feature string
	Weight  float64
}

// Explain lists the features of a sentence that pull most towards label,
// strongest first: what a person reads to see why a sentence was kept.
func (m *Model) Explain(sentence string, pos Position, label string, n int) []Contribution {
	k := slices.Index(m.Labels, label)
	if k < 0 {
		return nil
	}
	var out []Contribution
	for _, f := range Features(sentence, pos) {
		if w, ok := m.weights[f]; ok {
			// Relative to the mean of the other classes.
			rest := 0.0
			for j, v := range w {
				if j != k {
					rest += v
				}
			}
			out = append(out, Contribution{f, w[k] - rest/float64(len(w)-1)})
		}
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
	if len(out) > n {
		out = out[:n]
	}
	return out
}

func softmax(z []float64) []float64 {
	mx := z[0]
	for _, v := range z {
		mx = max(mx, v)
	}
	sum := 0.0
	p := make([]float64, len(z))
	for k, v := range z {
		p[k] = math.Exp(v - mx)
		sum += p[k]
	}
	for k := range p {
		p[k] /= sum
	}
	return p
}

const header = "hindsight-classifier v1"

// Encode writes the model as gzipped text: a header, then one line per
// feature with its weight per label, features sorted. The output depends
// only on the model, so a retrain on the same data gives the same bytes.
func (m *Model) Encode(w io.Writer) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(zw)
	fmt.Fprintf(bw, "%s\nname %s\nlabels %s\nfeatures %s\ndata %s\nexamples %d\n", header, m.Name,
		strings.Join(m.Labels, " "), m.Features, m.Data, m.Examples)
	fmt.Fprintf(bw, "bias %s\n", formatWeights(m.bias))
	keys := make([]string, 0, len(m.weights))
	for f := range m.weights {
		keys = append(keys, f)
	}
	slices.Sort(keys)
	for _, f := range keys {
		fmt.Fprintf(bw, "%s\t%s\n", f, formatWeights(m.weights[f]))
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

func formatWeights(ws []float64) string {
	parts := make([]string, len(ws))
	for i, v := range ws {
		parts[i] = strconv.FormatFloat(v, 'g', 4, 32)
	}
	return strings.Join(parts, " ")
}

// Decode reads a model written by Encode. A model trained with another
// FeatureVersion is an error: its weights mean nothing to Features.
func Decode(r io.Reader) (*Model, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("classifier model: %w", err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("classifier model: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	m := &Model{weights: map[string][]float64{}}
	line := 0
	for sc.Scan() {
		line++
		t := sc.Text()
		if line == 1 {
			if t != header {
				return nil, fmt.Errorf("classifier model: not a model file (header %q)", t)
			}
			continue
		}
		if f, ws, ok := strings.Cut(t, "\t"); ok {
			v, err := parseWeights(ws, len(m.Labels))
			if err != nil {
				return nil, fmt.Errorf("classifier model: line %d: %w", line, err)
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
		case "features":
			m.Features = val
		case "data":
			m.Data = val
		case "examples":
			m.Examples, _ = strconv.Atoi(val)
		case "bias":
			if m.bias, err = parseWeights(val, len(m.Labels)); err != nil {
				return nil, fmt.Errorf("classifier model: bias: %w", err)
			}
		default:
			return nil, fmt.Errorf("classifier model: line %d: unknown key %q", line, key)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("classifier model: %w", err)
	}
	switch {
	case len(m.Labels) < 2:
		return nil, fmt.Errorf("classifier model: fewer than two labels")
	case len(m.bias) != len(m.Labels):
		return nil, fmt.Errorf("classifier model: no bias")
	case m.Features != FeatureVersion:
		return nil, fmt.Errorf("classifier model %s was trained with features %s, this build computes %s: retrain it (hindsight train classifiers)", m.Name, m.Features, FeatureVersion)
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
		v, err := strconv.ParseFloat(f, 32)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
