// Package lang holds the small language helpers retrieval needs and that
// must agree wherever text is matched: a CJK-aware tokenizer, English and
// Chinese stop words, and a Porter stemmer for English.
//
// Text is folded the way memory.Normalize folds it (Unicode NFKC, lower
// case) before it is split, so full-width and half-width forms match. Latin
// text splits into words; runs of CJK characters (Han, kana, Hangul), which
// carry no spaces, become overlapping character bigrams plus single
// characters, which is how a keyword index can match Chinese without a
// dictionary.
package lang
