// Package app is the composition root: it assembles Hindsight from
// configuration, building each adapter (episodic store, vector index and
// its generations, embedder, LLM, extractor, judge, recall engine, the
// write path) behind its domain interface, for every process: the worker,
// the MCP server and the CLI. cmd/hindsight reads flags and environment
// into Config; nothing here does.
package app
