package lang

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/hindsight-memory/hindsight/runes"
)

// Fold normalises text for matching: Unicode NFKC (full-width to
// half-width) and lower case. It is the first step of Words and Terms, and
// what callers should apply before comparing phrases with their output.
func Fold(s string) string {
	return strings.ToLower(norm.NFKC.String(s))
}

// FoldQuotes is Fold with curly quotes made straight (’ ‘ to ', “ ” to
// "): the form that rules matching apostrophes and quoted text read, and
// that the sentence classifiers' features are computed on.
func FoldQuotes(s string) string { return quoteFolder.Replace(Fold(s)) }

var quoteFolder = strings.NewReplacer("’", "'", "‘", "'", "“", "\"", "”", "\"")

// HasCJK reports whether s contains any CJK character.
func HasCJK(s string) bool {
	for _, r := range s {
		if runes.IsCJK(r) {
			return true
		}
	}
	return false
}

// Words splits s into folded words, in order: Latin words and numbers, and
// each CJK character on its own. Stop words are kept and nothing is
// stemmed, so Words suits phrase matching (entity names, hints); index
// with Terms. Apostrophes inside a word are kept ("don't") and a
// possessive "'s" is dropped ("caroline's" → "caroline").
func Words(s string) []string {
	var out []string
	scan(Fold(s), func(w string, cjk bool) {
		if cjk {
			for _, r := range w {
				out = append(out, string(r))
			}
			return
		}
		out = append(out, w)
	})
	return out
}

// Terms returns the index terms of s: Latin words without stop words,
// stemmed with Stem, and for each run of CJK characters its overlapping
// bigrams plus its single characters that are not stop words. Indexing and
// querying must both use Terms so that they agree.
func Terms(s string) []string {
	return AppendTerms(nil, s)
}

// AppendTerms appends the terms of s (see Terms) to dst and returns it.
func AppendTerms(dst []string, s string) []string {
	scan(Fold(s), func(w string, cjk bool) {
		if !cjk {
			if !IsStopWord(w) {
				dst = append(dst, Stem(w))
			}
			return
		}
		rs := []rune(w)
		for i, r := range rs {
			if !isCJKStop(r) {
				dst = append(dst, string(r))
			}
			if i+1 < len(rs) {
				dst = append(dst, string(rs[i:i+2]))
			}
		}
	})
	return dst
}

// scan calls emit for each word of folded text s: a maximal run of Latin
// letters, digits and inner apostrophes (cjk false), or a maximal run of
// CJK characters (cjk true).
func scan(s string, emit func(w string, cjk bool)) {
	start, cjkRun := -1, false
	flush := func(end int) {
		if start < 0 {
			return
		}
		w := s[start:end]
		start = -1
		if !cjkRun {
			w = trimApostrophes(w)
			if w == "" {
				return
			}
		}
		emit(w, cjkRun)
	}
	for i, r := range s {
		switch {
		case runes.IsCJK(r):
			if start >= 0 && !cjkRun {
				flush(i)
			}
			if start < 0 {
				start, cjkRun = i, true
			}
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) ||
			isApostrophe(r) && start >= 0 && !cjkRun:
			if start >= 0 && cjkRun {
				flush(i)
			}
			if start < 0 {
				start, cjkRun = i, false
			}
		default:
			flush(i)
		}
	}
	flush(len(s))
}

func isApostrophe(r rune) bool { return r == '\'' || r == '’' }

// trimApostrophes drops a possessive ending and stray apostrophes:
// "caroline's" → "caroline", "kids'" → "kids", "don’t" → "don't".
func trimApostrophes(w string) string {
	w = strings.ReplaceAll(w, "’", "'")
	w = strings.TrimRight(w, "'")
	w = strings.TrimSuffix(w, "'s")
	return strings.TrimRight(w, "'")
}

// Run is a stretch of folded text the tokenizer sees as one unit: a Latin
// word or number, or a run of CJK characters (which carry no spaces).
type Run struct {
	Text string
	CJK  bool
}

// Runs splits s into folded runs, in order, apostrophes handled as Words
// handles them.
func Runs(s string) []Run {
	var out []Run
	scan(Fold(s), func(w string, cjk bool) { out = append(out, Run{w, cjk}) })
	return out
}

// IsCJKStopChar reports whether a single CJK character is a function
// character (particle, pronoun, measure word) that Terms drops.
func IsCJKStopChar(r rune) bool { return isCJKStop(r) }

// Identifier is a word written as code writes names, in camelCase or
// PascalCase ("readinessProbe", "NotReady", "maxRetries"): Whole is its
// term as Terms reads it, Parts the terms of the words it joins.
type Identifier struct {
	Whole string
	Parts []string
}

// Identifiers finds the camelCase and PascalCase words of s, so that a
// memory that writes "readinessProbe" speaks of a readiness probe, and a
// query that asks about "timeoutSeconds" of a timeout in seconds. Words
// in one case, or in capitals only ("HTTP", "UTC"), are not split; an
// acronym inside a name is one part ("parseHTTPResponse": parse, http,
// response).
func Identifiers(s string) []Identifier {
	var out []Identifier
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		w := s[start:end]
		start = -1
		parts := splitCamel(w)
		if len(parts) < 2 {
			return
		}
		id := Identifier{Whole: Stem(Fold(w))}
		for _, p := range parts {
			p = Fold(p)
			if len(p) >= 2 && !IsStopWord(p) {
				id.Parts = append(id.Parts, Stem(p))
			}
		}
		if len(id.Parts) > 0 {
			out = append(out, id)
		}
	}
	for i, r := range s {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(s))
	return out
}

// splitCamel splits an ASCII word at its case changes: "readinessProbe" →
// readiness, Probe; "parseHTTPResponse" → parse, HTTP, Response. A word
// with no lower-to-upper change is returned whole.
func splitCamel(w string) []string {
	var parts []string
	last := 0
	for i := 1; i < len(w); i++ {
		prev, cur := w[i-1], w[i]
		next := byte(0)
		if i+1 < len(w) {
			next = w[i+1]
		}
		lowerToUpper := isLowerASCII(prev) && isUpperASCII(cur)
		acronymEnd := isUpperASCII(prev) && isUpperASCII(cur) && isLowerASCII(next)
		if lowerToUpper || acronymEnd {
			parts = append(parts, w[last:i])
			last = i
		}
	}
	parts = append(parts, w[last:])
	if len(parts) < 2 || !strings.ContainsFunc(w, func(r rune) bool { return r >= 'a' && r <= 'z' }) {
		return []string{w}
	}
	return parts
}

func isLowerASCII(b byte) bool { return b >= 'a' && b <= 'z' }
func isUpperASCII(b byte) bool { return b >= 'A' && b <= 'Z' }

// DocTerms are the terms a memory is indexed on: its Terms, and the
// parts of its identifiers (Identifiers), so that words a query writes
// apart find the name a memory writes joined.
func DocTerms(s string) []string {
	out := Terms(s)
	for _, id := range Identifiers(s) {
		out = append(out, id.Parts...)
	}
	return out
}

// QueryTerms are the terms a query searches with: its Terms, and the
// parts of each of its identifiers that no document writes joined (known
// reports whether one does), so that "maxRetries" finds a memory that
// writes "max retries" without its parts outweighing the name where the
// name itself is stored.
func QueryTerms(s string, known func(term string) bool) []string {
	out := Terms(s)
	for _, id := range Identifiers(s) {
		if !known(id.Whole) {
			out = append(out, id.Parts...)
		}
	}
	return out
}
