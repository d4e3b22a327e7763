package inject

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"path"
	"slices"
	"strconv"
	"strings"
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

// Hash identifies a training set: a model records the hash of its data.
func Hash(xs []Example) string {
	h := sha256.New()
	for _, x := range xs {
		fmt.Fprintf(h, "%s\t%s\n", x.Label, x.Text)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Model is a logistic regression over Features: the probability that a
// text is an attack.
type Model struct {
	Features string
	Data     string
	Examples int
	// Threshold is the probability from which a text is an attack.
	Threshold float64
	bias      float64
	weights   map[string]float64
}

// Score is the probability that text is an attack.
func (m *Model) Score(text string) float64 {
	z := m.bias
	for _, f := range Features(text) {
		z += m.weights[f]
	}
	return 1 / (1 + math.Exp(-z))
}

// Attack reports whether text reads as an attack.
func (m *Model) Attack(text string) bool { return m.Score(text) >= m.Threshold }

// Contribution is one feature's weight in a decision.
type Contribution struct {
	Feature string
	Weight  float64
}

// Explain returns the n features of text that weigh most, either way.
func (m *Model) Explain(text string, n int) []Contribution {
	var cs []Contribution
	for _, f := range Features(text) {
		if w, ok := m.weights[f]; ok {
			cs = append(cs, Contribution{f, w})
		}
	}
	slices.SortFunc(cs, func(a, b Contribution) int { return cmp.Compare(math.Abs(b.Weight), math.Abs(a.Weight)) })
	return cs[:min(n, len(cs))]
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

func (o *TrainOptions) defaults() {
	if o.Epochs == 0 {
		o.Epochs = 20
	}
	if o.Rate == 0 {
		o.Rate = 0.3
	}
	if o.L2 == 0 {
		o.L2 = 1e-4
	}
	if o.MinCount == 0 {
		o.MinCount = 2
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Threshold == 0 {
		o.Threshold = 0.5
	}
}

// Train fits a model on xs with AdaGrad on the log loss, the two classes
// weighted to count alike (or as AttackWeight says). With Bags above one
// it averages the weights of that many fits, each over the examples in
// another order: one fit of a model this size moves with the order it
// reads the examples in. It is deterministic.
func Train(xs []Example, opts TrainOptions) (*Model, error) {
	opts.defaults()
	if opts.Bags > 1 {
		var avg *Model
		for b := range opts.Bags {
			o := opts
			o.Bags, o.Seed = 1, opts.Seed+uint64(b)
			m, err := Train(xs, o)
			if err != nil {
				return nil, err
			}
			if avg == nil {
				avg = m
				continue
			}
			avg.bias += m.bias
			for f, w := range m.weights {
				avg.weights[f] += w
			}
		}
		n := float64(opts.Bags)
		avg.bias /= n
		for f := range avg.weights {
			avg.weights[f] /= n
		}
		return avg, nil
	}
	if len(xs) == 0 {
		return nil, fmt.Errorf("inject: no examples")
	}
	feats := make([][]string, len(xs))
	df := map[string]int{}
	attacks := 0
	for i, x := range xs {
		feats[i] = Features(x.Text)
		if opts.Expand != nil {
			own := map[string]bool{}
			for _, f := range feats[i] {
				own[f] = true
			}
			for _, f := range feats[i] {
				for _, e := range opts.Expand(f) {
					if !own[e] {
						own[e] = true
						feats[i] = append(feats[i], e)
					}
				}
			}
		}
		for _, f := range feats[i] {
			df[f]++
		}
		if x.Attack() {
			attacks++
		}
	}
	if attacks == 0 || attacks == len(xs) {
		return nil, fmt.Errorf("inject: training needs both attacks and benign texts")
	}
	wAttack := float64(len(xs)) / (2 * float64(attacks))
	wBenign := float64(len(xs)) / (2 * float64(len(xs)-attacks))
	if opts.AttackWeight > 0 {
		wAttack, wBenign = opts.AttackWeight, 1
	}
	weights := map[string]float64{}
	g2 := map[string]float64{}
	var bias, biasG2 float64
	if opts.PriorBias {
		// The odds of an attack before reading a word: a text of words the
		// model never saw reads as what most texts are.
		bias = math.Log(float64(attacks) * wAttack / (float64(len(xs)-attacks) * wBenign))
	}
	order := make([]int, len(xs))
	for i := range order {
		order[i] = i
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x1d))
	for range opts.Epochs {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			z := bias
			for _, f := range feats[i] {
				if df[f] >= opts.MinCount {
					z += weights[f]
				}
			}
			p := 1 / (1 + math.Exp(-z))
			y, cw := 0.0, wBenign
			if xs[i].Attack() {
				y, cw = 1, wAttack
			}
			g := cw * (p - y)
			if !opts.PriorBias {
				biasG2 += g * g
				bias -= opts.Rate * g / math.Sqrt(biasG2+1e-8)
			}
			for _, f := range feats[i] {
				if df[f] < opts.MinCount {
					continue
				}
				gf := g + opts.L2*weights[f]
				g2[f] += gf * gf
				weights[f] -= opts.Rate * gf / math.Sqrt(g2[f]+1e-8)
			}
		}
	}
	for f, w := range weights {
		if math.Abs(w) < 1e-4 {
			delete(weights, f)
		}
	}
	return &Model{Features: FeatureVersion, Data: Hash(xs), Examples: len(xs), Threshold: opts.Threshold, bias: bias, weights: weights}, nil
}

// Encode writes the model as gzipped text: a header line, then one
// "feature<TAB>weight" line per feature, in order.
func (m *Model) Encode(w io.Writer) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(zw)
	fmt.Fprintf(bw, "inject\t%s\t%s\t%d\t%s\t%s\n", m.Features, m.Data, m.Examples,
		strconv.FormatFloat(m.Threshold, 'g', -1, 64), strconv.FormatFloat(m.bias, 'g', 6, 64))
	keys := make([]string, 0, len(m.weights))
	for f := range m.weights {
		keys = append(keys, f)
	}
	slices.Sort(keys)
	for _, f := range keys {
		fmt.Fprintf(bw, "%s\t%s\n", f, strconv.FormatFloat(m.weights[f], 'g', 5, 64))
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

// Decode reads a model Encode wrote.
func Decode(r io.Reader) (*Model, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	if !sc.Scan() {
		return nil, fmt.Errorf("inject: empty model")
	}
	h := strings.Split(sc.Text(), "\t")
	if len(h) != 6 || h[0] != "inject" {
		return nil, fmt.Errorf("inject: not a model header: %q", sc.Text())
	}
	m := &Model{Features: h[1], Data: h[2], weights: map[string]float64{}}
	if m.Examples, err = strconv.Atoi(h[3]); err != nil {
		return nil, fmt.Errorf("inject: header: %w", err)
	}
	if m.Threshold, err = strconv.ParseFloat(h[4], 64); err != nil {
		return nil, fmt.Errorf("inject: header: %w", err)
	}
	if m.bias, err = strconv.ParseFloat(h[5], 64); err != nil {
		return nil, fmt.Errorf("inject: header: %w", err)
	}
	for sc.Scan() {
		f, w, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			return nil, fmt.Errorf("inject: bad line %q", sc.Text())
		}
		v, err := strconv.ParseFloat(w, 64)
		if err != nil {
			return nil, fmt.Errorf("inject: %q: %w", f, err)
		}
		m.weights[f] = v
	}
	return m, sc.Err()
}

// Report is a model's quality on labelled examples.
type Report struct {
	Attacks, Benign int
	Caught, Flagged int // attacks flagged; benign texts flagged
	Missed, False   []Example
}

// Recall is the share of attacks flagged.
func (r Report) Recall() float64 { return ratio(r.Caught, r.Attacks) }

// FalsePositives is the share of benign texts flagged.
func (r Report) FalsePositives() float64 { return ratio(r.Flagged, r.Benign) }

// Precision is the share of flagged texts that are attacks.
func (r Report) Precision() float64 { return ratio(r.Caught, r.Caught+r.Flagged) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Evaluate measures m on xs.
func (m *Model) Evaluate(xs []Example) Report {
	var r Report
	for _, x := range xs {
		hit := m.Attack(x.Text)
		switch {
		case x.Attack():
			r.Attacks++
			if hit {
				r.Caught++
			} else {
				r.Missed = append(r.Missed, x)
			}
		default:
			r.Benign++
			if hit {
				r.Flagged++
				r.False = append(r.False, x)
			}
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
