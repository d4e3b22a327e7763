package offline

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// lang is the language a text is (mostly) written in.
type lang int

const (
	langEN lang = iota
	langZH
)

func isHan(r rune) bool { return unicode.Is(unicode.Han, r) }

// langOf says whether s reads as Chinese: enough Han characters relative to
// Latin letters. Chinese technical text is full of Latin names ("UTC",
// "openpyxl"), so a third as many Han characters as Latin letters already
// counts as Chinese.
func langOf(s string) lang {
	han, latin := 0, 0
	for _, r := range s {
		switch {
		case isHan(r):
			han++
		case r < utf8.RuneSelf && unicode.IsLetter(r):
			latin++
		}
	}
	if han > 0 && han*3 >= latin {
		return langZH
	}
	return langEN
}

func hasHan(s string) bool { return strings.IndexFunc(s, isHan) >= 0 }

// splitClauses splits a sentence at commas, semicolons and colons (both
// widths), keeping each delimiter with the clause before it so that the
// clauses join back into the sentence.
func splitClauses(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		switch r {
		case ',', '，', ';', '；', '、':
			out = append(out, s[start:i+utf8.RuneLen(r)])
			start = i + utf8.RuneLen(r)
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

var (
	questionStartEN = regexp.MustCompile(`^(should|shall|can|could|would|will|do|does|did|is|are|was|were|what|why|how|when|where|which|who|whom|may|might|have|has|any idea|is there|are there)\b`)
	questionZH      = regexp.MustCompile(`吗[。！!]?$|么[。]?$|呢[。]?$|要不要|是否|能不能|可不可以|会不会|是不是|有没有|为什么|为啥|怎么样|怎么办|什么时候|哪个|哪些`)
)

// isQuestion reports whether a (folded, filler-stripped) sentence asks
// something rather than states it.
func isQuestion(s string) bool {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, "?") || strings.HasSuffix(s, "？") {
		return true
	}
	return questionStartEN.MatchString(s) || questionZH.MatchString(s)
}

// capitalize upper-cases the first letter of an English sentence.
func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError || !unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// finish gives a sentence its terminal punctuation in its language, an
// upper-case start in English, and trims the clause punctuation left
// behind by cleaning.
func finish(s string) string {
	s = strings.Trim(strings.TrimSpace(s), ",，;；:： ")
	if s == "" {
		return s
	}
	zh := langOf(s) == langZH
	if !zh {
		s = capitalize(s)
	}
	last, _ := utf8.DecodeLastRuneInString(s)
	switch {
	case strings.ContainsRune(".!?。！？…", last):
		return s
	case zh:
		return s + "。"
	default:
		return s + "."
	}
}

// wordCount counts words, each Han character counting as half a word.
func wordCount(s string) int {
	han := 0
	for _, r := range s {
		if isHan(r) {
			han++
		}
	}
	return len(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || isHan(r) })) + han/2
}

// endSentence ends s with a full stop when it has no closing punctuation,
// so that a sentence joined after it starts a sentence of its own.
func endSentence(s string) string {
	last, _ := utf8.DecodeLastRuneInString(s)
	if strings.ContainsRune(".!?。！？…;；:：", last) {
		return s
	}
	if langOf(s) == langZH {
		return s + "。"
	}
	return s + "."
}
