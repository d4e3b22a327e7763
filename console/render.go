package console

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/runes"
)

// funcs are the templates' helpers.
func funcs(o Options) template.FuncMap {
	return template.FuncMap{
		"date": func(t time.Time) string {
			if t.IsZero() {
				return "—"
			}
			return t.UTC().Format("2006-01-02")
		},
		"datetime": func(t time.Time) string {
			if t.IsZero() {
				return "—"
			}
			return t.UTC().Format("2006-01-02 15:04 UTC")
		},
		"pct":   func(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) },
		"score": func(f float64) string { return fmt.Sprintf("%.3f", f) },
		// clip keeps n runes of a longer text and marks the cut with "…"
		// (runes.Clip, whose n counts the mark).
		"clip":  func(s string, n int) string { return runes.Clip(strings.TrimSpace(s), n+1) },
		"join":  strings.Join,
		"scope": memory.Scope.Label,
		"short": func(id string) string {
			if len(id) > 16 {
				return id[:16] + "…"
			}
			return id
		},
		"has": slices.Contains[[]string],
		"add": func(a, b int) int { return a + b },
		"flagged": func(m memory.Memory) bool {
			return slices.Contains(m.Flags, memory.FlagInstructionLike) || m.Status == memory.StatusQuarantined
		},
		"ui":    func() string { return Path },
		"pair":  func(a, b any) struct{ A, B any } { return struct{ A, B any }{a, b} },
		"nonce": func() string { return fmt.Sprintf("%x", time.Now().UnixNano()) },
	}
}

// barChart draws memories learned per day as an inline SVG, with each
// bar's count as its title.
func barChart(days []dayCount) template.HTML {
	const w, h, pad = 600, 120, 18
	peak := 1
	for _, d := range days {
		peak = max(peak, d.Count)
	}
	bw := float64(w) / float64(len(days))
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="memories learned per day, last %d days">`, w, h+pad, len(days))
	for i, d := range days {
		bh := math.Round(float64(h-4) * float64(d.Count) / float64(peak))
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.0f" width="%.1f" height="%.0f"><title>%s: %d</title></rect>`,
			float64(i)*bw+1, float64(h)-bh, bw-2, bh, d.Day.Format("2006-01-02"), d.Count)
	}
	for _, i := range []int{0, len(days) / 2, len(days) - 1} {
		anchor := map[bool]string{true: "end", false: "start"}[i == len(days)-1]
		x := float64(i)*bw + 1
		if i == len(days)-1 {
			x = float64(w) - 1
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%d" text-anchor="%s">%s</text>`, x, h+pad-4, anchor, days[i].Day.Format("Jan 2"))
	}
	fmt.Fprintf(&b, `<text x="%d" y="12" text-anchor="end">max %d</text></svg>`, w-2, peak)
	return template.HTML(b.String())
}

// kindChart draws counts as horizontal bars, largest first, named for
// screen readers by what it shows and every count.
func kindChart(name string, counts map[string]int) template.HTML {
	type kv struct {
		k string
		v int
	}
	var rows []kv
	peak := 1
	for k, v := range counts {
		rows = append(rows, kv{k, v})
		peak = max(peak, v)
	}
	slices.SortFunc(rows, func(a, b kv) int {
		if a.v != b.v {
			return b.v - a.v
		}
		return strings.Compare(a.k, b.k)
	})
	const w, rh = 320, 22
	parts := make([]string, len(rows))
	for i, r := range rows {
		parts[i] = fmt.Sprintf("%s %d", r.k, r.v)
	}
	label := name
	if len(parts) == 0 {
		label += ": none"
	} else {
		label += ": " + strings.Join(parts, ", ")
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="bars" viewBox="0 0 %d %d" role="img" aria-label="%s"><title>%s</title>`, w, max(1, len(rows))*rh,
		template.HTMLEscapeString(label), template.HTMLEscapeString(label))
	for i, r := range rows {
		bw := math.Round(float64(w-150) * float64(r.v) / float64(peak))
		fmt.Fprintf(&b, `<text x="0" y="%d">%s</text><rect x="100" y="%d" width="%.0f" height="%d"></rect><text x="%.0f" y="%d">%d</text>`,
			i*rh+15, template.HTMLEscapeString(r.k), i*rh+4, bw, rh-8, 104+bw, i*rh+15, r.v)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// diffPart is a run of words kept, removed or added between two texts.
type diffPart struct {
	Op   byte // ' ', '-', '+'
	Text string
}

// wordDiff is the word-level difference from a to b (a longest common
// subsequence of words; texts are short).
func wordDiff(a, b string) []diffPart {
	x, y := splitWords(a), splitWords(b)
	if len(x)*len(y) > 1<<20 {
		return []diffPart{{'-', a}, {'+', b}}
	}
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []diffPart
	emit := func(op byte, s string) {
		if n := len(out); n > 0 && out[n-1].Op == op {
			out[n-1].Text += s
			return
		}
		out = append(out, diffPart{op, s})
	}
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		switch {
		case x[i] == y[j]:
			emit(' ', x[i])
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			emit('-', x[i])
			i++
		default:
			emit('+', y[j])
			j++
		}
	}
	for ; i < len(x); i++ {
		emit('-', x[i])
	}
	for ; j < len(y); j++ {
		emit('+', y[j])
	}
	return out
}

// splitWords splits text into words with their trailing space, and each
// Han character on its own, so the parts join back into the text.
func splitWords(s string) []string {
	var out []string
	start := 0
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		if unicode.Is(unicode.Han, rs[i]) {
			if start < i {
				out = append(out, string(rs[start:i]))
			}
			out = append(out, string(rs[i]))
			start = i + 1
			continue
		}
		if unicode.IsSpace(rs[i]) && (i+1 == len(rs) || !unicode.IsSpace(rs[i+1])) {
			out = append(out, string(rs[start:i+1]))
			start = i + 1
		}
	}
	if start < len(rs) {
		out = append(out, string(rs[start:]))
	}
	return out
}
