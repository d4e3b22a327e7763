// Package metrics holds Hindsight's Prometheus metrics: recall latency and
// result counts, workflow counts by type and state, and LLM calls and
// tokens per pipeline stage, with the http.Handler that serves them on
// /metrics.
//
// A Metrics owns its registry; nothing is registered globally, so tests and
// several servers in one process never collide. Every method is safe on a
// nil *Metrics and then does nothing, so components take metrics as an
// optional dependency.
package metrics
