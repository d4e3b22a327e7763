package runes

import (
	"strings"
	"unicode"
)

// IsCJK reports whether r is written without spaces between words: a Han
// ideograph, Japanese kana or Hangul.
func IsCJK(r rune) bool {
	// No rune of these scripts lies below the Hangul Jamo (U+1100): most
	// text is answered without a table search (TestIsCJKEveryRune).
	return r >= 0x1100 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// OneLine folds every run of white space, line breaks included, into one
// space and trims the ends.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Clip cuts s to at most n runes: a longer s keeps its first n-1 and ends
// in "…". It never splits a rune.
func Clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:max(n-1, 0)]) + "…"
	}
	return s
}

// ClipLine is Clip of OneLine: a text shown on one line of a table, a
// title or a list.
func ClipLine(s string, n int) string { return Clip(OneLine(s), n) }

// ClipWords cuts s to at most n runes, at a word boundary when one is near
// (a space, or before a CJK character, within the last quarter), marking
// the cut with "…". The white space and commas left at the cut are
// trimmed.
func ClipWords(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := max(n-1, 0)
	for i := cut; i > n*3/4; i-- {
		if unicode.IsSpace(r[i]) || IsCJK(r[i]) {
			cut = i
			break
		}
	}
	return strings.TrimRightFunc(string(r[:cut]), func(r rune) bool { return unicode.IsSpace(r) || r == ',' || r == '，' }) + "…"
}
