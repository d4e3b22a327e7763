package scenarios

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Ratio is how many of some checks held.
type Ratio struct {
	Pass  int `json:"pass"`
	Total int `json:"total"`
}

// Value is the share that held (1 when there was nothing to check).
func (r Ratio) Value() float64 {
	if r.Total == 0 {
		return 1
	}
	return float64(r.Pass) / float64(r.Total)
}

func (r *Ratio) add(pass bool) {
	r.Total++
	if pass {
		r.Pass++
	}
}

// MarshalJSON adds the value.
func (r Ratio) MarshalJSON() ([]byte, error) {
	type plain Ratio
	return json.Marshal(struct {
		plain
		Value float64 `json:"value"`
	}{plain(r), r.Value()})
}

// Summary is a set of checks, by what they verify.
type Summary struct {
	Scenarios int `json:"scenarios"`
	// Extraction: expected memories distilled / expected.
	Extraction Ratio `json:"extraction"`
	// Noise: sessions within max_memories / sessions with a bound.
	Noise Ratio `json:"noise"`
	// Final: live, not_live, once and max_live checks that held.
	Final Ratio `json:"final"`
	Top1  Ratio `json:"top1"`
	Top3  Ratio `json:"top3"`
	// Forbid: probes with no forbidden result / probes with forbid.
	Forbid Ratio `json:"forbid"`
	// None: "nothing relevant" probes answered with nothing.
	None Ratio `json:"none"`
	// All is every check together: the overall score.
	All Ratio `json:"all"`
}

func (s *Summary) add(c Check) {
	switch c.Type {
	case CheckExpect:
		s.Extraction.add(c.Pass)
	case CheckNoise:
		s.Noise.add(c.Pass)
	case CheckLive, CheckNotLive, CheckOnce, CheckMaxLive:
		s.Final.add(c.Pass)
	case CheckTop1:
		s.Top1.add(c.Pass)
	case CheckTop3:
		s.Top3.add(c.Pass)
	case CheckForbid:
		s.Forbid.add(c.Pass)
	case CheckNone:
		s.None.add(c.Pass)
	}
	s.All.add(c.Pass)
}

// TagSummary is the summary of the scenarios with one tag.
type TagSummary struct {
	Tag string `json:"tag"`
	Summary
}

// ScenarioSummary is one scenario's result.
type ScenarioSummary struct {
	ID      string   `json:"id"`
	Lang    string   `json:"lang"`
	Tags    []string `json:"tags"`
	Passed  int      `json:"passed"`
	Checks  int      `json:"checks"`
	Seconds float64  `json:"seconds"`
}

// Report is a run's result.
type Report struct {
	Corpus   string  `json:"corpus,omitempty"`
	Sessions int     `json:"sessions"`
	Overall  Summary `json:"overall"`
	// CrossLanguage counts the probes asked in the other language from
	// their scenario's (Check.CrossLang).
	CrossLanguage Summary           `json:"cross_language"`
	Langs         []TagSummary      `json:"langs"`
	Tags          []TagSummary      `json:"tags"`
	Scenarios     []ScenarioSummary `json:"scenarios"`
	Failures      []Check           `json:"failures"`
	Seconds       float64           `json:"seconds"`
}

func buildReport(corpus string, ss []Scenario, rs []scenarioResult, took time.Duration) Report {
	r := Report{Corpus: corpus, Seconds: took.Seconds(), Failures: []Check{}}
	tags := map[string]*Summary{}
	langs := map[string]*Summary{}
	for i, s := range ss {
		res := rs[i]
		r.Sessions += res.sessions
		sum := ScenarioSummary{ID: s.ID, Lang: s.Lang, Tags: s.Tags, Seconds: res.took.Seconds()}
		var groups []*Summary
		for _, t := range uniqueTags(s.Tags) {
			if tags[t] == nil {
				tags[t] = &Summary{}
			}
			groups = append(groups, tags[t])
		}
		if langs[s.Lang] == nil {
			langs[s.Lang] = &Summary{}
		}
		groups = append(groups, langs[s.Lang], &r.Overall)
		for _, g := range groups {
			g.Scenarios++
		}
		for _, c := range res.checks {
			for _, g := range groups {
				g.add(c)
			}
			if c.CrossLang {
				r.CrossLanguage.add(c)
			}
			sum.Checks++
			if c.Pass {
				sum.Passed++
			} else {
				r.Failures = append(r.Failures, c)
			}
		}
		r.Scenarios = append(r.Scenarios, sum)
	}
	r.Tags = sortedSummaries(tags)
	r.Langs = sortedSummaries(langs)
	return r
}

// uniqueTags folds the spellings of a tag together ("cross-lang" is
// "crosslang").
func uniqueTags(tags []string) []string {
	var out []string
	for _, t := range tags {
		t = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(t)), "-", "")
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func sortedSummaries(m map[string]*Summary) []TagSummary {
	out := make([]TagSummary, 0, len(m))
	for t, s := range m {
		out = append(out, TagSummary{Tag: t, Summary: *s})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tag < out[j].Tag })
	return out
}

// WriteText prints the report: a table per tag and overall, then every
// failure.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	name := r.Corpus
	if name == "" {
		name = "corpus"
	}
	fmt.Fprintf(&b, "Memory scenarios (%s): %d scenarios, %d sessions, %.1f s\n\n", name, r.Overall.Scenarios, r.Sessions, r.Seconds)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tscenarios\textraction\tnoise\tfinal\ttop1\ttop3\tforbid\tnone\tall\t")
	row := func(name string, s Summary) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, s.Scenarios,
			cell(s.Extraction), cell(s.Noise), cell(s.Final), cell(s.Top1), cell(s.Top3), cell(s.Forbid), cell(s.None), cell(s.All))
	}
	for _, t := range r.Tags {
		row(t.Tag, t.Summary)
	}
	fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t\t\t")
	for _, l := range r.Langs {
		row("lang "+l.Tag, l.Summary)
	}
	row("overall", r.Overall)
	fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t\t\t")
	row("cross-language probes", r.CrossLanguage)
	tw.Flush()
	fmt.Fprintln(&b, "\ncells: share that held (held/checked); extraction = expected memories distilled, noise = sessions within max_memories,")
	fmt.Fprintln(&b, "final = live/not_live/once/max_live, top1/top3/forbid/none = recall probes, all = every check")
	if len(r.Failures) > 0 {
		fmt.Fprintf(&b, "\n%d failures:\n", len(r.Failures))
		for _, f := range r.Failures {
			fmt.Fprintf(&b, "- %s [%s] %s: want %s\n    found %s\n", f.Scenario, f.Type, f.Where, f.Want, f.Found)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func cell(r Ratio) string {
	if r.Total == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f (%d/%d)", r.Value(), r.Pass, r.Total)
}

// WriteJSON prints the report as indented JSON.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
