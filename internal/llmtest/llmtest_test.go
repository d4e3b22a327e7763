package llmtest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/internal/llmtest"
	"github.com/hindsight-memory/hindsight/llm/openai"
	"github.com/hindsight-memory/hindsight/memory"
)

func TestLLMPlaysItsScriptInOrder(t *testing.T) {
	usage := memory.TokenUsage{PromptTokens: 10, CompletionTokens: 2}
	down := errors.New("connection reset")
	l := llmtest.NewLLM("model-1", usage).Answer("first").Fail(down).Answer("second")
	ctx := context.Background()

	want := []struct {
		content string
		err     error
	}{{"first", nil}, {"", down}, {"second", nil}, {"", llmtest.ErrExhausted}}
	for i, w := range want {
		resp, err := l.Chat(ctx, memory.ChatRequest{User: string(rune('a' + i))})
		if resp.Content != w.content || !errors.Is(err, w.err) {
			t.Errorf("call %d: %q, %v; want %q, %v", i, resp.Content, err, w.content, w.err)
		}
		if w.err != llmtest.ErrExhausted && (resp.Model != "model-1" || resp.Usage != usage) {
			t.Errorf("call %d: model %q usage %+v", i, resp.Model, resp.Usage)
		}
	}
	calls := l.Calls()
	if len(calls) != 4 || calls[0].User != "a" || calls[3].User != "d" {
		t.Errorf("recorded %+v", calls)
	}
}

func TestServerAnswersOverTheOpenAIProtocol(t *testing.T) {
	srv := llmtest.NewServer(t, memory.TokenUsage{PromptTokens: 321, CompletionTokens: 45}).Answer(`{"ok":true}`)
	client, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "test", Model: "chat-1", MaxRetries: -1, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	resp, err := client.Chat(ctx, memory.ChatRequest{Stage: memory.StageJudge, User: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != `{"ok":true}` || resp.Model != "chat-1" || resp.Usage != (memory.TokenUsage{PromptTokens: 321, CompletionTokens: 45}) {
		t.Errorf("response %+v", resp)
	}
	if _, err := client.Chat(ctx, memory.ChatRequest{Stage: memory.StageJudge, User: "again"}); err == nil {
		t.Error("a call after the script was used up succeeded")
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0]["model"] != "chat-1" {
		t.Errorf("recorded %v", reqs)
	}
}
