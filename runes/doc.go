// Package runes holds the small helpers that measure, cut and classify
// text by its runes, shared by every layer, the domain (package memory)
// included, so that each exists once: white space folded onto one line, a
// cut to a number of runes (at a word when one is near), and the test for
// characters written without spaces between words. It uses the standard
// library only.
//
// Language-aware folding, tokenising and sentence splitting are package
// lang's.
package runes
