// Package llmtest holds scripted stand-ins for a chat model, for tests
// only: LLM, a memory.LLM that replays scripted answers and records the
// requests, and Server, an OpenAI-compatible chat completions endpoint
// that does the same over HTTP, for tests that go through llm/openai.
//
// Both fail a call once their script is used up, so that a test whose
// code asks more often than it expects sees an error rather than a
// made-up answer.
package llmtest
