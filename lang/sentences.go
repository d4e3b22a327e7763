package lang

import (
	"regexp"
	"strings"
	"unicode"
)

// Sentences splits text at sentence ends: Chinese 。！？, English
// .!? followed by a space or the end (not inside numbers like 2.3.1 or
// abbreviations like e.g.), and line breaks. Terminal punctuation stays
// with its sentence. Agents write Markdown: a line's quote, bullet,
// number or heading marker and bold or italic emphasis are dropped, and
// table rules are no sentence.
//
// It is the one splitter of the write path: the sentence classifiers'
// labelled data is split by the same rules (lang/classify/data), and the
// offline extractor and the chatter test split what they read with it.
func Sentences(s string) []string {
	var out []string
	rs := []rune(s)
	start := 0
	emit := func(end int) {
		if t := plainLine(string(rs[start:end])); t != "" {
			out = append(out, t)
		}
		start = end
	}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch r {
		case '\n':
			emit(i + 1)
		case '。', '！', '？':
			for i+1 < len(rs) && strings.ContainsRune("。！？」”)）", rs[i+1]) {
				i++
			}
			emit(i + 1)
		case '.', '!', '?':
			for i+1 < len(rs) && strings.ContainsRune(".!?\")'", rs[i+1]) {
				i++
			}
			if i+1 < len(rs) && !unicode.IsSpace(rs[i+1]) {
				continue
			}
			if r == '.' && endsWithAbbrev(string(rs[max(start, i-8):i])) {
				continue
			}
			emit(i + 1)
		}
	}
	emit(len(rs))
	return out
}

var (
	mdMarkerRE   = regexp.MustCompile(`^(?:>\s*)*(?:[-*+•]\s+|\d{1,3}[.)]\s+|#{1,6}\s+)?(?:\[[ xX]\]\s+)?`)
	mdEmphasisRE = regexp.MustCompile(`\*\*([^*\n]+)\*\*|__([^_\n]+)__`)
	mdRuleRE     = regexp.MustCompile(`^[\s|:\-=*_]+$`)
)

// plainLine is a piece of Markdown as plain text.
func plainLine(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || mdRuleRE.MatchString(s) && strings.ContainsAny(s, "-=*_") {
		return ""
	}
	s = mdMarkerRE.ReplaceAllString(s, "")
	if strings.Contains(s, "**") || strings.Contains(s, "__") {
		s = mdEmphasisRE.ReplaceAllString(s, "$1$2")
	}
	return strings.TrimSpace(s)
}

var abbrevRE = regexp.MustCompile(`(?i)(\be\.g|\bi\.e|\betc|\bvs|\bmr|\bmrs|\bdr|\bno|\bapprox)$`)

func endsWithAbbrev(s string) bool { return abbrevRE.MatchString(s) }
