package learn

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Confusion counts labelled examples by their label and the label
// predicted: Counts[gold][predicted], in the order of Labels.
type Confusion struct {
	Labels []string
	Counts [][]int
}

// NewConfusion returns empty counts for labels.
func NewConfusion(labels []string) Confusion {
	c := Confusion{Labels: labels, Counts: make([][]int, len(labels))}
	for i := range c.Counts {
		c.Counts[i] = make([]int, len(labels))
	}
	return c
}

// Add counts one example labelled gold and predicted predicted.
func (c Confusion) Add(gold, predicted int) { c.Counts[gold][predicted]++ }

// AddAll adds the counts of o, which has the same labels.
func (c Confusion) AddAll(o Confusion) {
	for i := range o.Counts {
		for j := range o.Counts[i] {
			c.Counts[i][j] += o.Counts[i][j]
		}
	}
}

// Total is how many examples were counted.
func (c Confusion) Total() int {
	n := 0
	for i := range c.Counts {
		for _, v := range c.Counts[i] {
			n += v
		}
	}
	return n
}

// Accuracy is the share predicted right (0 of none).
func (c Confusion) Accuracy() float64 {
	right := 0
	for i := range c.Counts {
		right += c.Counts[i][i]
	}
	return ratio(right, c.Total())
}

// PrecisionRecall returns the precision and recall of the label of index
// label: the share of examples predicted so that are so, and the share of
// those so that were predicted so (0 of none).
func (c Confusion) PrecisionRecall(label int) (p, r float64) {
	pred, gold := 0, 0
	for j := range c.Counts {
		pred += c.Counts[j][label]
		gold += c.Counts[label][j]
	}
	return ratio(c.Counts[label][label], pred), ratio(c.Counts[label][label], gold)
}

// FalsePositiveRate is the share of the examples not of the label of index
// label that were predicted to be of it.
func (c Confusion) FalsePositiveRate(label int) float64 {
	fp, neg := 0, 0
	for i := range c.Counts {
		if i == label {
			continue
		}
		for j, v := range c.Counts[i] {
			neg += v
			if j == label {
				fp += v
			}
		}
	}
	return ratio(fp, neg)
}

// Positive returns the precision and recall of the positive labels
// together (any label but Labels[0], predicted as any but Labels[0]): what
// a model that keeps or drops inputs is judged by.
func (c Confusion) Positive() (p, r float64) {
	tp, fp, fn := 0, 0, 0
	for i := range c.Counts {
		for j, n := range c.Counts[i] {
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
	return ratio(tp, tp+fp), ratio(tp, tp+fn)
}

// WriteTable prints each label's precision and recall and the counts, a
// row per label and a column per predicted label.
func (c Confusion) WriteTable(w io.Writer) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "label\tprecision\trecall\t")
	for _, l := range c.Labels {
		fmt.Fprintf(tw, "→%s\t", l)
	}
	fmt.Fprintln(tw)
	for i, l := range c.Labels {
		p, rc := c.PrecisionRecall(i)
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t", l, p, rc)
		for j := range c.Labels {
			fmt.Fprintf(tw, "%d\t", c.Counts[i][j])
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

// PRPoint is the precision and recall of calling positive every example
// scored at least Threshold.
type PRPoint struct {
	Threshold, Precision, Recall float64
}

// PRCurve returns the precision and recall at each distinct score of
// scores taken as the threshold, from the highest score down; positive
// says which examples are positive. It is empty when no example is
// positive.
func PRCurve(scores []float64, positive []bool) []PRPoint {
	order := make([]int, len(scores))
	total := 0
	for i := range order {
		order[i] = i
		if positive[i] {
			total++
		}
	}
	if total == 0 {
		return nil
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	var out []PRPoint
	tp, n := 0, 0
	for k, i := range order {
		n++
		if positive[i] {
			tp++
		}
		if k+1 < len(order) && scores[order[k+1]] == scores[i] {
			continue
		}
		out = append(out, PRPoint{Threshold: scores[i], Precision: ratio(tp, n), Recall: ratio(tp, total)})
	}
	return out
}

// ratio is a/b, 0 when b is 0.
func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
