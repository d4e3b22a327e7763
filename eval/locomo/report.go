package locomo

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText prints the report as a table.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "LoCoMo retrieval recall: %d conversations, %d turns, %d questions with evidence (%d without, skipped)\n",
		r.Conversations, r.Turns, r.Questions, r.Skipped)
	fmt.Fprintf(&b, "embedder: %s; fusion: %s; configuration: %s\n", r.Embedder, r.Fusion, r.Config)
	fmt.Fprintf(&b, "recall@k ranks every candidate; @k≥%.2f counts only results at or above the relevance threshold; none: questions that got nothing at it\n\n", r.Threshold)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "category\tquestions\t")
	for _, k := range r.Ks {
		fmt.Fprintf(tw, "recall@%d\t", k)
	}
	for _, k := range r.Ks {
		fmt.Fprintf(tw, "@%d≥%.2f\t", k, r.Threshold)
	}
	fmt.Fprint(tw, "none\t")
	if r.Baseline != nil {
		for _, k := range r.Ks {
			fmt.Fprintf(tw, "baseline@%d\t", k)
		}
	}
	fmt.Fprintln(tw)
	row := func(c CategoryReport, base *CategoryReport) {
		name := c.Name
		if c.Category != 0 {
			name = fmt.Sprintf("%d %s", c.Category, c.Name)
		}
		fmt.Fprintf(tw, "%s\t%d\t", name, c.Questions)
		for _, v := range c.Recall {
			fmt.Fprintf(tw, "%.3f\t", v)
		}
		for _, v := range c.AtThreshold {
			fmt.Fprintf(tw, "%.3f\t", v)
		}
		fmt.Fprintf(tw, "%d\t", c.None)
		if base != nil {
			for _, v := range base.Recall {
				fmt.Fprintf(tw, "%.3f\t", v)
			}
		}
		fmt.Fprintln(tw)
	}
	for i, c := range r.Categories {
		var base *CategoryReport
		if r.Baseline != nil {
			base = &r.Baseline.Categories[i]
		}
		row(c, base)
	}
	var base *CategoryReport
	if r.Baseline != nil {
		base = &r.Baseline.Overall
	}
	row(r.Overall, base)
	tw.Flush()
	fmt.Fprintf(&b, "\nrecall latency per question: p50 %.2f ms, p99 %.2f ms (mean %.2f ms, max %.2f ms)\n",
		r.Latency.P50Ms, r.Latency.P99Ms, r.Latency.MeanMs, r.Latency.MaxMs)
	fmt.Fprintf(&b, "ingest %.1f s, total %.1f s\n", r.IngestSeconds, r.TotalSeconds)
	fmt.Fprintln(&b, "categories (official LoCoMo mapping): 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON prints the report as indented JSON.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
