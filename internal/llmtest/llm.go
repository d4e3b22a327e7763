package llmtest

import (
	"context"
	"errors"
	"sync"

	"github.com/hindsight-memory/hindsight/memory"
)

// ErrExhausted is the error of a call after the script is used up.
var ErrExhausted = errors.New("llmtest: script exhausted")

// LLM is a memory.LLM that answers each request with the next step of its
// script and records every request. It is safe for concurrent use.
type LLM struct {
	model string
	usage memory.TokenUsage

	mu     sync.Mutex
	script []reply
	calls  []memory.ChatRequest
}

type reply struct {
	content string
	err     error
}

var _ memory.LLM = (*LLM)(nil)

// NewLLM returns an LLM with an empty script whose every answer is
// reported as coming from model and costing usage.
func NewLLM(model string, usage memory.TokenUsage) *LLM {
	return &LLM{model: model, usage: usage}
}

// Answer adds answers with these contents to the script and returns l.
func (l *LLM) Answer(contents ...string) *LLM {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range contents {
		l.script = append(l.script, reply{content: c})
	}
	return l
}

// Fail adds a call that fails with err to the script and returns l.
func (l *LLM) Fail(err error) *LLM {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.script = append(l.script, reply{err: err})
	return l
}

// Chat records r and plays the next step of the script. A failing step
// still reports the model and usage, as a client does for an answer it
// received but could not use; once the script is used up, Chat returns
// an empty response and ErrExhausted.
func (l *LLM) Chat(_ context.Context, r memory.ChatRequest) (memory.ChatResponse, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, r)
	if len(l.script) == 0 {
		return memory.ChatResponse{}, ErrExhausted
	}
	next := l.script[0]
	l.script = l.script[1:]
	return memory.ChatResponse{Content: next.content, Model: l.model, Usage: l.usage}, next.err
}

// Calls returns the requests received so far, in order.
func (l *LLM) Calls() []memory.ChatRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]memory.ChatRequest(nil), l.calls...)
}
