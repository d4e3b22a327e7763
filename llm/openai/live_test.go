package openai

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// liveClient returns a client for the real server named by OPENAI_BASE_URL
// (with OPENAI_API_KEY, OPENAI_MODEL, OPENAI_EMBEDDING_MODEL and
// OPENAI_EMBEDDING_DIM), or skips.
func liveClient(t *testing.T) *Client {
	t.Helper()
	base := os.Getenv("OPENAI_BASE_URL")
	if base == "" {
		t.Skip("OPENAI_BASE_URL is not set: no real OpenAI-compatible server to test against")
	}
	dim, _ := strconv.Atoi(os.Getenv("OPENAI_EMBEDDING_DIM"))
	c, err := New(Config{
		BaseURL:        base,
		APIKey:         os.Getenv("OPENAI_API_KEY"),
		Model:          os.Getenv("OPENAI_MODEL"),
		EmbeddingModel: os.Getenv("OPENAI_EMBEDDING_MODEL"),
		EmbeddingDim:   dim,
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func TestLiveChatStructured(t *testing.T) {
	c := liveClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, err := c.Chat(ctx, memory.ChatRequest{
		Stage:      memory.StageJudge,
		System:     "Answer in JSON.",
		User:       "Is 7 a prime number?",
		SchemaName: "answer",
		Schema:     json.RawMessage(`{"type":"object","properties":{"prime":{"type":"boolean"}},"required":["prime"],"additionalProperties":false}`),
		MaxTokens:  50,
	})
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	var out struct{ Prime bool }
	if err := json.Unmarshal([]byte(resp.Content), &out); err != nil || !out.Prime {
		t.Errorf("content %q: %v", resp.Content, err)
	}
}

func TestLiveEmbed(t *testing.T) {
	c := liveClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	vecs, err := c.Embed(ctx, []string{"Always give report timestamps in UTC.", "报表时间统一用UTC"})
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	for _, v := range vecs {
		var sum float64
		for _, x := range v {
			sum += float64(x) * float64(x)
		}
		if len(v) != c.Dim() || math.Abs(sum-1) > 1e-3 {
			t.Errorf("len %d (want %d), norm² %f", len(v), c.Dim(), sum)
		}
	}
}
