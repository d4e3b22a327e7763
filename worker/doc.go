// Package worker assembles Hindsight from configuration: it builds each
// adapter (episodic store, vector index, embedder, LLM, extractor, judge,
// recall engine) behind its domain interface, and registers the workflows
// and activities on a Temporal worker. cmd/hindsight reads flags and
// environment into Config; nothing here does.
package worker
