package consolidate

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/hindsight-memory/hindsight/lang/callargs"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/runes"
)

// Text rules shared by the offline summary and promotion: how steps and
// failures of different episodes are recognised as the same, in English
// and Chinese.

// tokens returns the sorted, distinct comparison tokens of s: Latin words,
// identifiers and numbers in lower case (split at '.', '-', '/' and other
// punctuation, so that sales_jan.csv gives sales_jan and csv), and Chinese
// text as character bigrams (a lone character as itself), since Chinese is
// written without spaces.
func tokens(s string) []string {
	s = memory.Normalize(s)
	var out []string
	var word []rune
	var han []rune
	flushWord := func() {
		if len(word) > 0 {
			out = append(out, string(word))
			word = word[:0]
		}
	}
	flushHan := func() {
		switch len(han) {
		case 0:
		case 1:
			out = append(out, string(han))
		default:
			for i := 0; i+1 < len(han); i++ {
				out = append(out, string(han[i:i+2]))
			}
		}
		han = han[:0]
	}
	for _, r := range s {
		switch {
		case runes.IsCJK(r):
			flushWord()
			han = append(han, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			flushHan()
			word = append(word, r)
		default:
			flushWord()
			flushHan()
		}
	}
	flushWord()
	flushHan()
	slices.Sort(out)
	return slices.Compact(out)
}

// jaccard is |a∩b| / |a∪b| of two sorted, distinct token lists; 1 when
// both are empty.
func jaccard(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// params lists the settings of a call (see package callargs): its
// command-line flags (-n staging, --timeout 10m, --dry-run), then its
// keyword arguments and assignments, the last value winning for a
// repeated key. Steps and attempts are free text that may hold either, so
// both are read.
func params(s string) []callargs.Param {
	out := callargs.Flags(strings.Fields(s))
	for _, p := range callargs.Assignments(s) {
		out = callargs.Add(out, p)
	}
	return out
}

// paramKey is the set of a call's settings as one comparable string.
func paramKey(s string) string {
	ps := params(s)
	keys := make([]string, len(ps))
	for i, p := range ps {
		keys[i] = memory.Normalize(p.String())
	}
	slices.Sort(keys)
	return strings.Join(keys, "\x00")
}

// stripHint drops the result hint the offline extractor appends to a step
// ("python: df = pd.read_csv(…) → (120, 4)"): results differ from session
// to session while the step is the same.
func stripHint(step string) string {
	if before, _, ok := strings.Cut(step, " → "); ok && strings.TrimSpace(before) != "" {
		return strings.TrimSpace(before)
	}
	return strings.TrimSpace(step)
}

// splitTool splits an offline step or attempt "python: df = …" into its
// tool and call; text without a tool prefix is all call.
func splitTool(s string) (tool, call string) {
	if t, c, ok := strings.Cut(s, ": "); ok && toolNameRE.MatchString(t) {
		return t, strings.TrimSpace(c)
	}
	return "", s
}

var toolNameRE = regexp.MustCompile(`^[A-Za-z][\w.\-]{0,40}$`)

// action is a step or a failed attempt prepared for comparison.
type action struct {
	text   string   // as written, result hint stripped
	norm   string   // memory.Normalize(text)
	toks   []string // tokens(text)
	params string   // paramKey(text)
}

func newAction(s string) action {
	t := stripHint(s)
	return action{text: t, norm: memory.Normalize(t), toks: tokens(t), params: paramKey(t)}
}

// Similarity rules, shared by summaries and promotion.
const (
	// sameStepJaccard is the token overlap at which two steps (or two
	// attempts) are the same action, provided their settings are equal:
	// the same call on another file or service ("read_csv('sales_jan.csv',
	// encoding='gbk')", "…sales_feb.csv…") shares about 0.8; a different
	// call with one shared library far less.
	sameStepJaccard = 0.5
	// sameCauseJaccard is the overlap at which two error messages without
	// a recognisable error name are the same cause.
	sameCauseJaccard = 0.4
	// fixJaccard is the overlap at which a successful step is a corrected
	// retry of a failed attempt, as in the offline extractor's lesson
	// rules.
	fixJaccard = 0.3
)

// sameAction reports whether two steps or attempts are the same action:
// equal after normalisation, or the same settings and enough shared
// tokens. Settings must match exactly because they are what tells
// encoding='gbk' from encoding='utf-8'.
func sameAction(a, b action) bool {
	if a.norm == b.norm {
		return true
	}
	return a.params == b.params && jaccard(a.toks, b.toks) >= sameStepJaccard
}

// errorNameRE finds the name of an error in a message: Python and Java
// exception classes, Go-style "Error:" prefixes are not names.
var errorNameRE = regexp.MustCompile(`\b([A-Z][A-Za-z0-9]*(?:Error|Exception|Warning|Timeout|Refused|NotFound|Denied))\b`)

// errorName is the most specific error name in a cause, or "".
func errorName(cause string) string {
	ms := errorNameRE.FindAllString(cause, -1)
	// The last name is the one raised ("Traceback … UnicodeDecodeError").
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i] != "Error" && ms[i] != "Exception" {
			return ms[i]
		}
	}
	return ""
}

// cause is an error message prepared for comparison.
type cause struct {
	text string
	name string
	toks []string
}

func newCause(s string) cause {
	s = strings.TrimSpace(s)
	return cause{text: s, name: errorName(s), toks: tokens(s)}
}

// sameCause reports whether two error messages report the same problem:
// the same error name, or, without names, enough shared words.
func sameCause(a, b cause) bool {
	if a.name != "" || b.name != "" {
		return a.name == b.name
	}
	return jaccard(a.toks, b.toks) >= sameCauseJaccard
}

// errorPrefixRE matches a generic "Error:" label in front of a message.
var errorPrefixRE = regexp.MustCompile(`^(?i:error|fatal|错误|报错)\s*[:：]\s*`)

// shortCause is how a lesson names a cause: its error name, else its
// first line, clipped.
func shortCause(c string) string {
	if n := errorName(c); n != "" {
		return n
	}
	line, _, _ := strings.Cut(strings.TrimSpace(c), "\n")
	line = errorPrefixRE.ReplaceAllString(line, "")
	return runes.ClipWords(strings.TrimRight(line, ".。 "), 90)
}

// chinese reports whether texts are mostly Chinese: at least one Han
// character for every three Latin letters. Code and file names inside a
// Chinese sentence do not make it English.
func chinese(texts ...string) bool {
	han, latin := 0, 0
	for _, t := range texts {
		for _, r := range t {
			switch {
			case runes.IsCJK(r):
				han++
			case r < unicode.MaxASCII && unicode.IsLetter(r):
				latin++
			}
		}
	}
	return han > 0 && 3*han >= latin
}
