package inject

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/hindsight-memory/hindsight/learn"
)

// Labels.
const (
	LabelAttack = "attack"
	LabelBenign = "benign"
)

// Example is one labelled text.
type Example struct {
	Text   string `json:"text"`
	Label  string `json:"label"`
	Lang   string `json:"lang"`
	Family string `json:"family"`
	// File and Line say where it was read, for reports.
	File string `json:"-"`
	Line int    `json:"-"`
}

// Attack reports whether the example is labelled an attack.
func (x Example) Attack() bool { return x.Label == LabelAttack }

// LoadData reads every *.jsonl file of dir in fsys, in name order. A line
// that is not a valid example is an error naming the file and line.
func LoadData(fsys fs.FS, dir string) ([]Example, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var xs []Example
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		raw, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var x Example
			if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", e.Name(), n, err)
			}
			if x.Label != LabelAttack && x.Label != LabelBenign || strings.TrimSpace(x.Text) == "" {
				return nil, fmt.Errorf("%s:%d: want a text labelled attack or benign", e.Name(), n)
			}
			x.File, x.Line = e.Name(), n
			xs = append(xs, x)
		}
	}
	return xs, nil
}

// Hash identifies a training set: a model records the hash of its data
// (learn.DataHash of each text's label and text).
func Hash(xs []Example) string {
	h := learn.NewDataHash()
	for _, x := range xs {
		h.Add(x.Label, x.Text)
	}
	return h.Sum()
}

// Labels of the model, the negative class first.
var labels = []string{LabelBenign, LabelAttack}

// Model is a binary logistic regression over Features (see package
// learn): the probability that a text is an attack. Its Threshold is the
// probability from which a text is an attack.
type Model struct {
	*learn.Model
}

// Score is the probability that text is an attack.
func (m *Model) Score(text string) float64 { return m.Model.Score(learn.Indicators(Features(text))) }

// Attack reports whether text reads as an attack.
func (m *Model) Attack(text string) bool { return m.Score(text) >= m.Threshold }

// Contribution is one feature's weight in a decision.
type Contribution = learn.Contribution

// Explain returns the n features of text that weigh most, either way.
func (m *Model) Explain(text string, n int) []Contribution {
	return m.Model.Explain(learn.Indicators(Features(text)), 1, n)
}

// TrainOptions tune training; the zero value means the defaults.
type TrainOptions struct {
	Epochs   int     // default 20
	Rate     float64 // AdaGrad's learning rate, default 0.3
	L2       float64 // weight decay per update, default 1e-4
	MinCount int     // drop features seen in fewer examples, default 2
	Seed     uint64  // order of examples, default 1
	// Threshold is the attack probability from which a text is an attack,
	// default 0.5.
	Threshold float64
	// Expand, when set, adds to each training example the features of
	// words that mean the same as its own (from a dictionary), so that
	// the model learns weights for wordings the data does not use. It is
	// used in training only: the model needs no dictionary to run.
	Expand func(feature string) []string
	// PriorBias fixes the intercept at the log odds of an attack in the
	// (weighted) data instead of learning it, so that only words move a
	// text from the prior: one of unknown words reads as most texts do.
	PriorBias bool
	// Bags is how many fits to average (default 1).
	Bags int
	// AttackWeight, when set, weighs each attack as this many benign
	// texts; unset, the two classes weigh alike in total.
	AttackWeight float64
}

// learnOptions returns the learner's options for o.
func (o TrainOptions) learnOptions() learn.Options {
	l := learn.Options{Binary: true, Epochs: o.Epochs, Rate: o.Rate, L2: o.L2, MinCount: o.MinCount, Seed: o.Seed,
		Stream: 0x1d, PriorBias: o.PriorBias, Bags: o.Bags, Prune: 1e-4, Threshold: o.Threshold, Digits: 5}
	if l.Epochs == 0 {
		l.Epochs = 20
	}
	if l.L2 == 0 {
		l.L2 = 1e-4
	}
	if l.Threshold == 0 {
		l.Threshold = 0.5
	}
	if o.AttackWeight > 0 {
		l.ClassWeights = []float64{1, o.AttackWeight}
	}
	return l
}

// Train fits a model on xs with AdaGrad on the log loss, the two classes
// weighted to count alike (or as AttackWeight says). With Bags above one
// it averages the weights of that many fits, each over the examples in
// another order: one fit of a model this size moves with the order it
// reads the examples in. It is deterministic.
func Train(xs []Example, opts TrainOptions) (*Model, error) {
	if len(xs) == 0 {
		return nil, fmt.Errorf("inject: no examples")
	}
	lx := make([]learn.Example, len(xs))
	for i, x := range xs {
		feats := Features(x.Text)
		if opts.Expand != nil {
			own := map[string]bool{}
			for _, f := range feats {
				own[f] = true
			}
			for _, f := range feats {
				for _, e := range opts.Expand(f) {
					if !own[e] {
						own[e] = true
						feats = append(feats, e)
					}
				}
			}
		}
		lx[i] = learn.Example{Features: learn.Indicators(feats)}
		if x.Attack() {
			lx[i].Label = 1
		}
	}
	m, err := learn.Train(labels, lx, opts.learnOptions())
	if err != nil {
		return nil, fmt.Errorf("inject: %w", err)
	}
	m.Name, m.Features, m.Data = "inject", FeatureVersion, Hash(xs)
	return &Model{m}, nil
}

// Decode reads a model Encode wrote.
func Decode(r io.Reader) (*Model, error) {
	m, err := learn.Decode(r)
	if err != nil {
		return nil, fmt.Errorf("inject: %w", err)
	}
	if !m.Binary || !slices.Equal(m.Labels, labels) {
		return nil, fmt.Errorf("inject: model %s is not a binary model of %v", m.Name, labels)
	}
	return &Model{m}, nil
}

// Report is a model's quality on labelled examples.
type Report struct {
	// Confusion counts the texts by label and decision (benign, attack).
	Confusion     learn.Confusion
	Missed, False []Example // attacks not flagged; benign texts flagged
}

// Attacks is how many texts are attacks.
func (r Report) Attacks() int { return r.Confusion.Counts[1][0] + r.Confusion.Counts[1][1] }

// Benign is how many texts are benign.
func (r Report) Benign() int { return r.Confusion.Counts[0][0] + r.Confusion.Counts[0][1] }

// Caught is how many attacks were flagged.
func (r Report) Caught() int { return r.Confusion.Counts[1][1] }

// Flagged is how many benign texts were flagged.
func (r Report) Flagged() int { return r.Confusion.Counts[0][1] }

// Recall is the share of attacks flagged.
func (r Report) Recall() float64 {
	_, rc := r.Confusion.PrecisionRecall(1)
	return rc
}

// FalsePositives is the share of benign texts flagged.
func (r Report) FalsePositives() float64 { return r.Confusion.FalsePositiveRate(1) }

// Precision is the share of flagged texts that are attacks.
func (r Report) Precision() float64 {
	p, _ := r.Confusion.PrecisionRecall(1)
	return p
}

// Evaluate measures m on xs.
func (m *Model) Evaluate(xs []Example) Report {
	r := Report{Confusion: learn.NewConfusion(labels)}
	for _, x := range xs {
		gold, got := 0, 0
		if x.Attack() {
			gold = 1
		}
		if m.Attack(x.Text) {
			got = 1
		}
		r.Confusion.Add(gold, got)
		switch {
		case gold == 1 && got == 0:
			r.Missed = append(r.Missed, x)
		case gold == 0 && got == 1:
			r.False = append(r.False, x)
		}
	}
	return r
}

// Synonyms is the part of a dictionary training expands words with.
type Synonyms interface {
	Synonyms(stem string) []string
}

// SynonymsFrom returns a TrainOptions.Expand that adds, for each word
// feature, the words of the same sense in d.
func SynonymsFrom(d Synonyms) func(string) []string {
	return func(f string) []string {
		s, ok := strings.CutPrefix(f, "w:")
		if !ok {
			return nil
		}
		syns := d.Synonyms(s)
		out := make([]string, 0, len(syns))
		for _, syn := range syns {
			out = append(out, "w:"+syn)
		}
		return out
	}
}
