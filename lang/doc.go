// Package lang holds the small language helpers retrieval needs and that
// must agree wherever text is matched: a CJK-aware tokenizer, English and
// Chinese stop words, a Porter stemmer for English, the folding rules
// match on (Fold, FoldQuotes), and the one sentence splitter of the write
// path (Sentences), which the sentence classifiers' data is split by.
//
// Text is folded the way memory.Normalize folds it (Unicode NFKC, lower
// case) before it is split, so full-width and half-width forms match. Latin
// text splits into words; runs of CJK characters (Han, kana, Hangul), which
// carry no spaces, become overlapping character bigrams plus single
// characters, which is how a keyword index can match Chinese without a
// dictionary.
package lang
