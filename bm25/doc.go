// Package bm25 turns memories and queries into the sparse keyword vectors
// that production recall searches inside the vector index, so that one
// hybrid search ranks by BM25 as the in-process keyword index does. The
// write side (package index) stores document vectors and term statistics
// rows with it, the read side (package recall) weighs queries with it:
// both import it, neither the other.
//
// A document's vector holds, for each distinct term of its keyword text
// (lang.Terms of memory.IndexText, the tokenizer the in-process index
// uses), the BM25 term-frequency weight
//
//	tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen))
//
// and a query's holds each distinct term's IDF, ln(1 + (N − df + ½)/(df + ½)),
// from the tenant's term statistics (memory.TermStats). Their inner product
// is the document's BM25 score for the query. Indices are the terms'
// 32-bit FNV-1a hashes; two terms of one document that collide add up.
//
// The one difference from the in-process index is the average length: a
// vector index cannot renormalise stored weights, so a document is
// weighted with the tenant's average length when it is written. The
// average of a tenant's memories moves slowly; a reindex rewrites every
// weight with the current one.
//
// Changing the tokenizer or the weighting changes every stored vector:
// Tokenizer is part of the vector index generation's name, so a change is
// a new generation that the Reindex workflow fills, exactly like a change
// of embedder.
package bm25
