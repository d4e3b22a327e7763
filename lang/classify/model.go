package classify

import (
	"fmt"
	"io"
	"slices"

	"github.com/hindsight-memory/hindsight/learn"
)

// Model is a trained multinomial logistic regression over Features (see
// package learn): its Name is the role's, its Labels the role's labels.
type Model struct {
	*learn.Model
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
	p := m.Model.Predict(learn.Indicators(Features(sentence, pos)))
	return Prediction{Label: m.Labels[learn.Best(p)], P: p}
}

// Contribution is one feature's pull towards a label.
type Contribution = learn.Contribution

// Explain lists the features of a sentence that pull most towards label,
// strongest first: what a person reads to see why a sentence was kept.
func (m *Model) Explain(sentence string, pos Position, label string, n int) []Contribution {
	return m.Model.Explain(learn.Indicators(Features(sentence, pos)), slices.Index(m.Labels, label), n)
}

// Decode reads a model written by Encode. A model trained with another
// FeatureVersion is an error: its weights mean nothing to Features.
func Decode(r io.Reader) (*Model, error) {
	m, err := learn.Decode(r)
	if err != nil {
		return nil, fmt.Errorf("classifier model: %w", err)
	}
	if m.Binary {
		return nil, fmt.Errorf("classifier model %s is binary, want one weight per label", m.Name)
	}
	if m.Features != FeatureVersion {
		return nil, fmt.Errorf("classifier model %s was trained with features %s, this build computes %s: retrain it (hindsight train classifiers)", m.Name, m.Features, FeatureVersion)
	}
	return &Model{m}, nil
}
