package learn

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"strings"
	"testing"
)

// words is a small text task: "never"/"always" mark a rule, "thanks"
// and "ok" chatter.
func words() []Example {
	var xs []Example
	for _, s := range []struct {
		text  string
		label int
	}{
		{"never push to main", 1}, {"always use utc", 1}, {"never deploy fridays", 1}, {"always run tests", 1},
		{"thanks a lot", 0}, {"ok thanks", 0}, {"ok great", 0}, {"thanks again", 0},
	} {
		xs = append(xs, Example{Features: Indicators(strings.Fields(s.text)), Label: s.label})
	}
	return xs
}

var twoLabels = []string{"none", "rule"}

func TestTrainSeparatesBinaryAndSoftmax(t *testing.T) {
	for _, binary := range []bool{true, false} {
		m, err := Train(twoLabels, words(), Options{Binary: binary, MinCount: 1, Epochs: 20})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			text string
			want int
		}{{"never again", 1}, {"always", 1}, {"thanks", 0}, {"ok", 0}} {
			x := Indicators(strings.Fields(c.text))
			p := m.Predict(x)
			if got := m.Label(p); got != c.want {
				t.Errorf("binary %v: %q labelled %d (p %v), want %d", binary, c.text, got, p, c.want)
			}
			if math.Abs(p[0]+p[1]-1) > 1e-12 || math.Abs(m.Score(x)-p[1]) > 1e-12 {
				t.Errorf("binary %v: %q: p %v, score %v", binary, c.text, p, m.Score(x))
			}
			if m.Binary && m.Positive(x) != (c.want == 1) {
				t.Errorf("%q: Positive %v", c.text, m.Positive(x))
			}
		}
	}
}

func TestTrainingIsDeterministicAndEncodingRoundTrips(t *testing.T) {
	for _, opts := range []Options{
		{MinCount: 1},
		{MinCount: 1, Binary: true, Bags: 3, PriorBias: true, Threshold: 0.3, Digits: 6},
		{MinCount: 1, Prune: 0.05, ClassWeights: []float64{1, 2}},
	} {
		a, err := Train(twoLabels, words(), opts)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Train(twoLabels, words(), opts)
		a.Name, a.Features, a.Data = "t", "v1", "sha256:x"
		b.Name, b.Features, b.Data = "t", "v1", "sha256:x"
		var ea, eb bytes.Buffer
		if err := a.Encode(&ea); err != nil {
			t.Fatal(err)
		}
		b.Encode(&eb)
		if !bytes.Equal(ea.Bytes(), eb.Bytes()) {
			t.Errorf("%+v: two trainings gave different bytes", opts)
		}
		d, err := Decode(bytes.NewReader(ea.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if d.Name != "t" || d.Features != "v1" || d.Data != "sha256:x" || d.Examples != 8 || d.Binary != opts.Binary ||
			d.Threshold != opts.Threshold || d.Size() != a.Size() || d.Digits != a.Digits {
			t.Errorf("decoded %+v, want %+v", d, a)
		}
		var again bytes.Buffer
		d.Encode(&again)
		if !bytes.Equal(again.Bytes(), ea.Bytes()) {
			t.Errorf("%+v: a decoded model encodes to other bytes", opts)
		}
		x := Indicators([]string{"never", "thanks"})
		if pa, pd := a.Score(x), d.Score(x); math.Abs(pa-pd) > 1e-3 {
			t.Errorf("%+v: score %v before encoding, %v after", opts, pa, pd)
		}
	}
}

func TestTrainOptions(t *testing.T) {
	xs := words()
	// Unknown features read as the prior odds when the bias is fixed.
	m, err := Train(twoLabels, append(xs, Example{Features: Indicators([]string{"never"}), Label: 1}), Options{Binary: true, MinCount: 1, PriorBias: true, ClassWeights: []float64{1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Score(Indicators([]string{"unseen"})), 5.0/9; math.Abs(got-want) > 1e-12 {
		t.Errorf("prior: %v, want %v", got, want)
	}
	// Prune drops small weights; MinCount rare features.
	all, _ := Train(twoLabels, xs, Options{MinCount: 1})
	pruned, _ := Train(twoLabels, xs, Options{MinCount: 1, Prune: 0.5})
	frequent, _ := Train(twoLabels, xs, Options{MinCount: 2})
	if !(pruned.Size() < all.Size() && frequent.Size() < all.Size()) {
		t.Errorf("sizes: all %d, pruned %d, min count 2 %d", all.Size(), pruned.Size(), frequent.Size())
	}
	// Bags average fits over other orders.
	one, _ := Train(twoLabels, xs, Options{MinCount: 1, Binary: true})
	bagged, _ := Train(twoLabels, xs, Options{MinCount: 1, Binary: true, Bags: 4})
	if one.Score(Indicators([]string{"never"})) == bagged.Score(Indicators([]string{"never"})) {
		t.Error("bagging changed nothing")
	}
	for name, bad := range map[string]func() error{
		"no examples":   func() error { _, err := Train(twoLabels, nil, Options{}); return err },
		"one label":     func() error { _, err := Train([]string{"x"}, xs, Options{}); return err },
		"label range":   func() error { _, err := Train(twoLabels, []Example{{Label: 2}}, Options{}); return err },
		"binary of 3":   func() error { _, err := Train([]string{"a", "b", "c"}, xs, Options{Binary: true}); return err },
		"binary 1 side": func() error { _, err := Train(twoLabels, xs[:4], Options{Binary: true}); return err },
		"weights":       func() error { _, err := Train(twoLabels, xs, Options{ClassWeights: []float64{1}}); return err },
	} {
		if bad() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestValuedFeatures learns from a score rather than words: the shape of
// a judge over a similarity.
func TestValuedFeatures(t *testing.T) {
	var xs []Example
	for i := range 40 {
		s := float64(i) / 40
		y := 0
		if s > 0.5 {
			y = 1
		}
		xs = append(xs, Example{Features: []Feature{{"sim", s}, {"one", 1}}, Label: y})
	}
	m, err := Train(twoLabels, xs, Options{Binary: true, Epochs: 200, Rate: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := m.Score([]Feature{{"sim", 0.1}, {"one", 1}}), m.Score([]Feature{{"sim", 0.9}, {"one", 1}})
	if !(lo < 0.5 && hi > 0.5) {
		t.Errorf("score at 0.1 %.3f, at 0.9 %.3f", lo, hi)
	}
	if c := m.Explain([]Feature{{"sim", 0.9}, {"one", 1}}, 1, 1); len(c) != 1 || c[0].Feature != "sim" || c[0].Weight <= 0 {
		t.Errorf("explain %v", c)
	}
}

func TestDecodeRejectsBrokenFiles(t *testing.T) {
	m, _ := Train(twoLabels, words(), Options{MinCount: 1})
	var good bytes.Buffer
	m.Encode(&good)
	for name, text := range map[string]string{
		"header":  "not a model\n",
		"key":     header + "\nname x\nlabels a b\nlink softmax\ncolour red\n",
		"link":    header + "\nname x\nlabels a b\nlink relu\n",
		"labels":  header + "\nname x\nlabels a\nlink softmax\nbias 0\n",
		"weights": header + "\nname x\nlabels a b\nlink softmax\nbias 0 0\nf\t1\n",
		"no bias": header + "\nname x\nlabels a b\nlink sigmoid\n",
	} {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(text))
		zw.Close()
		if _, err := Decode(&b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	if _, err := Decode(strings.NewReader("plain")); err == nil {
		t.Error("decoded a file that is not gzipped")
	}
}

func TestDataHash(t *testing.T) {
	h := NewDataHash()
	h.Add("never push", "rule")
	h.Add("ok", "none")
	sum := sha256.Sum256([]byte("never push\x00rule\nok\x00none\n"))
	if got, want := h.Sum(), "sha256:"+hex.EncodeToString(sum[:]); got != want {
		t.Errorf("hash %s, want %s", got, want)
	}
}

func TestFoldSplitAndCrossValidate(t *testing.T) {
	for _, key := range []string{"a.jsonl:1", "a.jsonl:2", "b.jsonl:7"} {
		if f := Fold(key, 5); f < 0 || f >= 5 || f != Fold(key, 5) {
			t.Errorf("Fold(%q) = %d", key, f)
		}
	}
	train, test := Split([]int{10, 11, 12, 13}, func(i, x int) bool { return i%2 == 1 })
	if len(train) != 2 || train[0] != 10 || test[1] != 13 {
		t.Errorf("split %v %v", train, test)
	}
	xs := words()
	c, results, err := CrossValidate(twoLabels, xs, func(i int) string { return []string{"x", "y"}[i%2] }, Options{MinCount: 1})
	if err != nil {
		t.Fatal(err)
	}
	if c.Total() != len(xs) || len(results) != len(xs) || results[0].Index != 0 || results[len(xs)/2].Index != 1 {
		t.Errorf("total %d, results %v", c.Total(), results)
	}
}

func TestConfusion(t *testing.T) {
	c := NewConfusion([]string{"none", "a", "b"})
	for _, gp := range [][2]int{{0, 0}, {0, 0}, {0, 1}, {1, 1}, {1, 2}, {2, 2}, {2, 0}, {1, 1}} {
		c.Add(gp[0], gp[1])
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if !near(c.Accuracy(), 5.0/8) {
		t.Errorf("accuracy %v", c.Accuracy())
	}
	if p, r := c.PrecisionRecall(1); !near(p, 2.0/3) || !near(r, 2.0/3) {
		t.Errorf("a: precision %v recall %v", p, r)
	}
	// Positive: a or b against none: 4 right of 5 predicted, of 5 gold.
	if p, r := c.Positive(); !near(p, 4.0/5) || !near(r, 4.0/5) {
		t.Errorf("positive: precision %v recall %v", p, r)
	}
	if got := c.FalsePositiveRate(1); !near(got, 1.0/5) {
		t.Errorf("false positive rate %v", got)
	}
	all := NewConfusion(c.Labels)
	all.AddAll(c)
	all.AddAll(c)
	if all.Total() != 16 {
		t.Errorf("total %d", all.Total())
	}
	var b strings.Builder
	c.WriteTable(&b)
	if !strings.Contains(b.String(), "→none") || !strings.Contains(b.String(), "0.667") {
		t.Errorf("table:\n%s", b.String())
	}
}

func TestPRCurve(t *testing.T) {
	got := PRCurve([]float64{0.9, 0.8, 0.8, 0.3}, []bool{true, false, true, false})
	want := []PRPoint{{0.9, 1, 0.5}, {0.8, 2.0 / 3, 1}, {0.3, 0.5, 1}}
	if len(got) != len(want) {
		t.Fatalf("curve %v, want %v", got, want)
	}
	for i := range want {
		if got[i].Threshold != want[i].Threshold || math.Abs(got[i].Precision-want[i].Precision) > 1e-12 || got[i].Recall != want[i].Recall {
			t.Errorf("point %d: %v, want %v", i, got[i], want[i])
		}
	}
	if PRCurve([]float64{0.5}, []bool{false}) != nil {
		t.Error("a curve without positives")
	}
}
