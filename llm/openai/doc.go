// Package openai is Hindsight's client for OpenAI-compatible HTTP APIs
// (OpenAI, Azure-style gateways, Ollama, vLLM, DeepSeek, Qwen/DashScope and
// others that speak /chat/completions and /embeddings).
//
// A *Client implements memory.LLM — chat completions with JSON-schema
// structured output, a model per pipeline stage — and memory.Embedder —
// batched, L2-normalised embeddings whose dimension is checked against the
// configuration. Transient failures (429, 5xx, timeouts, refused
// connections) are retried with exponential backoff and jitter, honouring
// Retry-After; requests the server rejects for good become memory.EINVALID
// errors that carry the server's message and the model name.
//
// The package reads no environment variables: cmd/hindsight builds a Config
// (typically from OPENAI_BASE_URL, OPENAI_API_KEY and per-stage model
// variables) and calls New.
package openai
