package llmtest

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/hindsight-memory/hindsight/memory"
)

// Server is a scripted OpenAI-compatible chat completions endpoint (POST
// {URL}/chat/completions). It answers each request with the next scripted
// content, naming the model the request asked for, and records the
// decoded request bodies. Once the script is used up it answers 500.
type Server struct {
	// URL is the base URL to give an OpenAI-compatible client; it ends
	// in /v1.
	URL string

	usage memory.TokenUsage

	mu       sync.Mutex
	script   []string
	requests []map[string]any
}

// NewServer starts a Server whose every answer reports usage; it stops
// when the test ends.
func NewServer(t testing.TB, usage memory.TokenUsage) *Server {
	t.Helper()
	s := &Server{usage: usage}
	ts := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(ts.Close)
	s.URL = ts.URL + "/v1"
	return s
}

// Answer adds answers with these contents to the script and returns s.
func (s *Server) Answer(contents ...string) *Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, contents...)
	return s
}

// Requests returns the request bodies received so far, in order.
func (s *Server) Requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]map[string]any, len(s.requests))
	for i, r := range s.requests {
		out[i] = maps.Clone(r)
	}
	return out
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	var req map[string]any
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	var content string
	exhausted := len(s.script) == 0
	if !exhausted {
		content, s.script = s.script[0], s.script[1:]
	}
	s.mu.Unlock()
	if exhausted {
		http.Error(w, `{"error":{"message":"llmtest: script exhausted"}}`, http.StatusInternalServerError)
		return
	}
	resp := map[string]any{
		"id":      "chatcmpl-1",
		"object":  "chat.completion",
		"model":   req["model"],
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": s.usage.PromptTokens, "completion_tokens": s.usage.CompletionTokens},
	}
	w.Header().Set("Content-Type", "application/json")
	// The answer always encodes; a write error means the client has gone,
	// which its own test reports.
	_ = json.NewEncoder(w).Encode(resp)
}
