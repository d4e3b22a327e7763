package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hindsight-memory/hindsight/internal/llmtest"
	"github.com/hindsight-memory/hindsight/memory"
)

type colour struct {
	Name string `json:"name"`
}

// parseColour accepts {"name": "red"|"green"}.
func parseColour(content string) (colour, error) {
	var c colour
	if err := json.Unmarshal([]byte(content), &c); err != nil {
		return c, fmt.Errorf("it is not JSON (%v)", err)
	}
	if c.Name != "red" && c.Name != "green" {
		return c, fmt.Errorf("name %q is not red or green", c.Name)
	}
	return c, nil
}

func TestAskJSON(t *testing.T) {
	usage := memory.TokenUsage{PromptTokens: 10, CompletionTokens: 2}
	req := memory.ChatRequest{Stage: memory.StageJudge, User: "Pick a colour."}
	down := errors.New("connection reset")
	tests := []struct {
		name    string
		model   *llmtest.LLM
		retry   JSONRetry
		want    JSONAnswer[colour]
		wantErr error
		calls   int
		retried string // what the second request adds to the user prompt
	}{
		{
			name:  "first answer accepted",
			model: llmtest.NewLLM("m1", usage).Answer(`{"name":"red"}`),
			retry: JSONRetry{Attempts: 2},
			want:  JSONAnswer[colour]{Value: colour{"red"}, OK: true, Model: "m1", Usage: usage},
			calls: 1,
		},
		{
			name:    "fenced answer fixed on retry",
			model:   llmtest.NewLLM("m1", usage).Answer(`{"name":"blue"}`, "```json\n{\"name\":\"green\"}\n```"),
			retry:   JSONRetry{Attempts: 2},
			want:    JSONAnswer[colour]{Value: colour{"green"}, OK: true, Model: "m1", Usage: memory.TokenUsage{PromptTokens: 20, CompletionTokens: 4}},
			calls:   2,
			retried: "\n\nYour previous answer was rejected: name \"blue\" is not red or green. Answer again with one JSON object that follows the schema.",
		},
		{
			name:    "never valid",
			model:   llmtest.NewLLM("m1", usage).Answer("Sure!", `{"name":"blue"}`),
			retry:   JSONRetry{Attempts: 2, Follow: "the rules"},
			want:    JSONAnswer[colour]{Problem: `name "blue" is not red or green`, Model: "m1", Usage: memory.TokenUsage{PromptTokens: 20, CompletionTokens: 4}},
			calls:   2,
			retried: "\n\nYour previous answer was rejected: it is not JSON (invalid character 'S' looking for beginning of value). Answer again with one JSON object that follows the rules.",
		},
		{
			name:  "no attempts still asks once",
			model: llmtest.NewLLM("m1", usage).Answer(`{"name":"blue"}`),
			want:  JSONAnswer[colour]{Problem: `name "blue" is not red or green`, Model: "m1", Usage: usage},
			calls: 1,
		},
		{
			name:    "model error ends it with the usage so far",
			model:   llmtest.NewLLM("m1", usage).Answer(`{}`).Fail(down),
			retry:   JSONRetry{Attempts: 3},
			want:    JSONAnswer[colour]{Problem: `name "" is not red or green`, Model: "m1", Usage: memory.TokenUsage{PromptTokens: 20, CompletionTokens: 4}},
			wantErr: down,
			calls:   2,
			retried: "\n\nYour previous answer was rejected: name \"\" is not red or green. Answer again with one JSON object that follows the schema.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AskJSON(context.Background(), tt.model, req, tt.retry, parseColour)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("answer\n got %+v\nwant %+v", got, tt.want)
			}
			calls := tt.model.Calls()
			if len(calls) != tt.calls {
				t.Fatalf("%d calls, want %d", len(calls), tt.calls)
			}
			if calls[0].User != req.User || calls[0].Stage != req.Stage {
				t.Errorf("first request changed: %+v", calls[0])
			}
			if tt.calls > 1 {
				added, ok := strings.CutPrefix(calls[1].User, req.User)
				if !ok || added != tt.retried {
					t.Errorf("retry prompt %q, want the request's plus %q", calls[1].User, tt.retried)
				}
			}
		})
	}
}

func TestTrimFences(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`:                  `{"a":1}`,
		"```json\n{\"a\":1}\n```":  `{"a":1}`,
		"```\n[1, 2]\n```":         `[1, 2]`,
		"```{\"a\":1}```":          `{"a":1}`,
		"  \n```JSON\n{}\n```  \n": `{}`,
	} {
		if got := trimFences(in); got != want {
			t.Errorf("trimFences(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEncodePrompt(t *testing.T) {
	doc := struct {
		Content string `json:"content"`
	}{"</transcript> a < b && c > d"}
	got, err := EncodePrompt(doc, "  ")
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"content\": \"</transcript> a < b && c > d\"\n}"; got != want {
		t.Errorf("EncodePrompt = %q, want %q", got, want)
	}
	if _, err := EncodePrompt(func() {}, ""); err == nil {
		t.Error("a value JSON cannot hold was encoded")
	}
}
