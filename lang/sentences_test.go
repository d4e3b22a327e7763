package lang

import (
	"slices"
	"testing"
)

func TestSentences(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"Deploy v2.3.1 to staging, e.g. with helm. Then stop! 好了。还要吗？\nnext line",
			[]string{"Deploy v2.3.1 to staging, e.g. with helm.", "Then stop!", "好了。", "还要吗？", "next line"}},
		// ； joins clauses of one sentence (the offline extractor reads
		// them as clauses).
		{"报表用 UTC；金额保留两位小数。", []string{"报表用 UTC；金额保留两位小数。"}},
		{"- **Root cause:** the header is on row 3.\n|---|---|\n## Use `header=2`.",
			[]string{"Root cause: the header is on row 3.", "Use `header=2`."}},
	} {
		if got := Sentences(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Sentences(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
