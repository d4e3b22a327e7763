package metrics

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMetricsExposed(t *testing.T) {
	m := New()
	m.ObserveRecall(3*time.Millisecond, 5)
	m.ObserveRecall(40*time.Millisecond, 0)
	m.RecallFailed(memory.Invalidf("recall", "text is required"))
	m.UsageDropped(2)
	m.Workflow("SessionEnd", WorkflowStarted)
	m.Workflow("SessionEnd", WorkflowCompleted)
	m.Workflow("Merge", WorkflowFailed)
	m.LLMCall(memory.StageExtract, "gpt-x", time.Second, memory.TokenUsage{PromptTokens: 120, CompletionTokens: 30}, nil)
	m.LLMCall(memory.StageJudge, "", time.Second, memory.TokenUsage{}, errors.New("boom"))

	body := scrape(t, m)
	for _, want := range []string{
		`hindsight_recall_duration_seconds_count 2`,
		`hindsight_recall_duration_seconds_bucket{le="0.005"} 1`,
		`hindsight_recall_results_sum 5`,
		`hindsight_recall_errors_total{code="invalid"} 1`,
		`hindsight_recall_usage_dropped_total 2`,
		`hindsight_workflows_total{state="started",workflow="SessionEnd"} 1`,
		`hindsight_workflows_total{state="completed",workflow="SessionEnd"} 1`,
		`hindsight_workflows_total{state="failed",workflow="Merge"} 1`,
		`hindsight_llm_calls_total{model="gpt-x",result="ok",stage="extract"} 1`,
		`hindsight_llm_calls_total{model="",result="error",stage="judge"} 1`,
		`hindsight_llm_tokens_total{direction="prompt",stage="extract"} 120`,
		`hindsight_llm_tokens_total{direction="completion",stage="extract"} 30`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestNilMetricsAreNoOps(t *testing.T) {
	var m *Metrics
	m.ObserveRecall(time.Millisecond, 1)
	m.RecallFailed(errors.New("x"))
	m.UsageDropped(1)
	m.Workflow("SessionEnd", WorkflowStarted)
	m.LLMCall(memory.StageQuery, "m", time.Millisecond, memory.TokenUsage{PromptTokens: 1}, nil)
	if InstrumentLLM(nil, m) != nil {
		t.Fatal("InstrumentLLM(nil, nil) should return nil")
	}
}

type fakeLLM struct{}

func (fakeLLM) Chat(ctx context.Context, r memory.ChatRequest) (memory.ChatResponse, error) {
	return memory.ChatResponse{Content: "{}", Model: "tiny", Usage: memory.TokenUsage{PromptTokens: 7, CompletionTokens: 3}}, nil
}

func TestInstrumentLLM(t *testing.T) {
	m := New()
	llm := InstrumentLLM(fakeLLM{}, m)
	for range 2 {
		if _, err := llm.Chat(context.Background(), memory.ChatRequest{Stage: memory.StageQuery}); err != nil {
			t.Fatal(err)
		}
	}
	body := scrape(t, m)
	for _, want := range []string{
		`hindsight_llm_calls_total{model="tiny",result="ok",stage="query"} 2`,
		`hindsight_llm_tokens_total{direction="prompt",stage="query"} 14`,
		`hindsight_llm_tokens_total{direction="completion",stage="query"} 6`,
		`hindsight_llm_call_duration_seconds_count{stage="query"} 2`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
