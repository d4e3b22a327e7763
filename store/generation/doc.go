// Package generation keeps the vector index in generations and serves the
// one recall reads as a memory.VectorIndex (and its embedder as a
// memory.Embedder): a decorator that a switch repoints at once.
package generation
