package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// reply is one scripted answer of the fake server.
type reply struct {
	status int
	header map[string]string
	body   string
	hang   bool // block until the client gives up on the request
}

// fakeAPI is a scripted OpenAI-compatible server: each request gets the
// next reply, and every request is recorded.
type fakeAPI struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	replies []reply
	reqs    []recorded
}

type recorded struct {
	path string
	auth string
	body map[string]any
}

func newFakeAPI(t *testing.T, replies ...reply) *fakeAPI {
	t.Helper()
	f := &fakeAPI{t: t, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		f.t.Errorf("request body is not JSON: %v", err)
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, recorded{path: r.URL.Path, auth: r.Header.Get("Authorization"), body: body})
	if len(f.replies) == 0 {
		f.mu.Unlock()
		f.t.Errorf("unexpected request %d to %s", len(f.reqs), r.URL.Path)
		http.Error(w, `{"error":{"message":"no more scripted replies"}}`, 500)
		return
	}
	rep := f.replies[0]
	f.replies = f.replies[1:]
	f.mu.Unlock()
	if rep.hang {
		<-r.Context().Done()
		return
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(cmpOr(rep.status, 200))
	io.WriteString(w, rep.body)
}

func (f *fakeAPI) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// sleeps records the waits the client asked for, without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func newClient(t *testing.T, baseURL string, mod func(*Config)) (*Client, *sleeps) {
	t.Helper()
	s := &sleeps{}
	cfg := Config{
		BaseURL:        baseURL + "/v1",
		APIKey:         "sk-test",
		Model:          "chat-default",
		StageModels:    map[memory.Stage]string{memory.StageJudge: "chat-judge"},
		EmbeddingModel: "embed-test",
		EmbeddingDim:   4,
		BackoffBase:    100 * time.Millisecond,
		BackoffMax:     time.Second,
		Sleep:          s.sleep,
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c, s
}

func chatBody(content string) string {
	b, _ := json.Marshal(map[string]any{
		"model":   "chat-default-2026",
		"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": 120, "completion_tokens": 30},
	})
	return string(b)
}

var schema = json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`)

func structured(stage memory.Stage) memory.ChatRequest {
	return memory.ChatRequest{Stage: stage, System: "You judge.", User: "Is it ok?", SchemaName: "verdict v1", Schema: schema, MaxTokens: 200}
}

func TestChatStructuredRequestAndUsage(t *testing.T) {
	api := newFakeAPI(t, reply{body: chatBody(`{"ok":true}`)})
	c, _ := newClient(t, api.srv.URL, nil)
	resp, err := c.Chat(context.Background(), structured(memory.StageJudge))
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if resp.Content != `{"ok":true}` || resp.Model != "chat-default-2026" {
		t.Errorf("resp = %+v", resp)
	}
	if resp.Usage != (memory.TokenUsage{PromptTokens: 120, CompletionTokens: 30}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	reqs := api.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.path != "/v1/chat/completions" || r.auth != "Bearer sk-test" {
		t.Errorf("path %q auth %q", r.path, r.auth)
	}
	if r.body["model"] != "chat-judge" {
		t.Errorf("model = %v, want the judge stage's model", r.body["model"])
	}
	rf, _ := r.body["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	if rf["type"] != "json_schema" || js["strict"] != true || js["name"] != "verdict_v1" || js["schema"] == nil {
		t.Errorf("response_format = %v", rf)
	}
	msgs, _ := r.body["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" {
		t.Errorf("messages = %v", msgs)
	}
}

func TestChatDefaultModelForStagesWithoutOwn(t *testing.T) {
	api := newFakeAPI(t, reply{body: chatBody(`{"ok":false}`)})
	c, _ := newClient(t, api.srv.URL, nil)
	if _, err := c.Chat(context.Background(), structured(memory.StageExtract)); err != nil {
		t.Fatal(err)
	}
	if got := api.requests()[0].body["model"]; got != "chat-default" {
		t.Errorf("model = %v, want chat-default", got)
	}
}

func TestChatRetriesOn429HonouringRetryAfter(t *testing.T) {
	api := newFakeAPI(t,
		reply{status: 429, header: map[string]string{"Retry-After": "7"}, body: `{"error":{"message":"Rate limit reached","type":"requests"}}`},
		reply{status: 503, body: `upstream busy`},
		reply{body: chatBody(`{"ok":true}`)},
	)
	c, s := newClient(t, api.srv.URL, nil)
	resp, err := c.Chat(context.Background(), structured(memory.StageJudge))
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if resp.Content != `{"ok":true}` {
		t.Errorf("content = %q", resp.Content)
	}
	if len(api.requests()) != 3 {
		t.Errorf("%d requests, want 3", len(api.requests()))
	}
	if len(s.d) != 2 {
		t.Fatalf("waits = %v, want 2", s.d)
	}
	if s.d[0] != 7*time.Second {
		t.Errorf("first wait = %s, want the server's Retry-After of 7s", s.d[0])
	}
	// Second retry: attempt 1 backs off within [base·2/2, base·2].
	if s.d[1] < 100*time.Millisecond || s.d[1] > 200*time.Millisecond {
		t.Errorf("second wait = %s, want within [100ms, 200ms]", s.d[1])
	}
}

func TestRetryAfterIsCapped(t *testing.T) {
	api := newFakeAPI(t,
		reply{status: 429, header: map[string]string{"Retry-After-Ms": "900000"}, body: `{}`},
		reply{body: chatBody(`{"ok":true}`)},
	)
	c, s := newClient(t, api.srv.URL, func(c *Config) { c.MaxRetryAfter = 3 * time.Second })
	if _, err := c.Chat(context.Background(), structured(memory.StageJudge)); err != nil {
		t.Fatal(err)
	}
	if len(s.d) != 1 || s.d[0] != 3*time.Second {
		t.Errorf("waits = %v, want [3s]", s.d)
	}
}

func TestChat500sExhausted(t *testing.T) {
	api := newFakeAPI(t,
		reply{status: 500, body: `{"error":{"message":"The server had an error"}}`},
		reply{status: 502, body: `bad gateway`},
		reply{status: 500, body: `{"error":{"message":"The server had an error"}}`},
	)
	c, s := newClient(t, api.srv.URL, func(c *Config) { c.MaxRetries = 2 })
	_, err := c.Chat(context.Background(), structured(memory.StageExtract))
	if err == nil {
		t.Fatal("Chat succeeded, want an error")
	}
	if memory.IsInvalid(err) {
		t.Errorf("an outage must stay retryable, got EINVALID: %v", err)
	}
	for _, want := range []string{"giving up after 3 attempts", "HTTP 500", "The server had an error", "chat-default"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 500 {
		t.Errorf("error does not carry the last status: %v", err)
	}
	// Exponential: attempt 0 waits within [50ms,100ms], attempt 1 within [100ms,200ms].
	if len(s.d) != 2 || s.d[0] < 50*time.Millisecond || s.d[0] > 100*time.Millisecond || s.d[1] < 100*time.Millisecond || s.d[1] > 200*time.Millisecond {
		t.Errorf("waits = %v", s.d)
	}
}

func TestBackoffGrowsAndIsCapped(t *testing.T) {
	c, _ := newClient(t, "http://127.0.0.1:1", func(c *Config) { c.BackoffBase = time.Second; c.BackoffMax = 5 * time.Second })
	c.jitter = func() float64 { return 0.999999 }
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for i, w := range want {
		if got := c.backoff(i); got > w || got < w-time.Millisecond {
			t.Errorf("backoff(%d) = %s, want ≈%s", i, got, w)
		}
	}
	c.jitter = func() float64 { return 0 }
	if got := c.backoff(2); got != 2*time.Second {
		t.Errorf("backoff(2) with no jitter = %s, want half of 4s", got)
	}
}

func TestChat400IsInvalidWithServerMessageAndModel(t *testing.T) {
	api := newFakeAPI(t, reply{status: 400, body: `{"error":{"message":"Invalid value for 'temperature': must be between 0 and 2.","type":"invalid_request_error","code":"invalid_value"}}`})
	c, s := newClient(t, api.srv.URL, nil)
	_, err := c.Chat(context.Background(), memory.ChatRequest{Stage: memory.StageJudge, User: "hi", Temperature: 9})
	if !memory.IsInvalid(err) {
		t.Fatalf("err = %v, want EINVALID", err)
	}
	for _, want := range []string{"chat-judge", "must be between 0 and 2", "HTTP 400"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	var se *StatusError
	if !errors.As(err, &se) || se.Code != "invalid_value" || se.Type != "invalid_request_error" {
		t.Errorf("StatusError = %+v", se)
	}
	if len(api.requests()) != 1 || len(s.d) != 0 {
		t.Errorf("a 400 must not be retried: %d requests, waits %v", len(api.requests()), s.d)
	}
}

func TestChat401NamesTheKey(t *testing.T) {
	api := newFakeAPI(t, reply{status: 401, body: `{"error":"invalid api key"}`}) // Ollama's shape
	c, _ := newClient(t, api.srv.URL, nil)
	_, err := c.Chat(context.Background(), structured(memory.StageJudge))
	if !memory.IsInvalid(err) || !strings.Contains(err.Error(), "API key") || !strings.Contains(err.Error(), "invalid api key") {
		t.Errorf("err = %v", err)
	}
}

func TestChatFallsBackToJSONObjectOnce(t *testing.T) {
	api := newFakeAPI(t,
		reply{status: 400, body: `{"object":"error","message":"response_format type json_schema is not supported","detail":"response_format.type: json_schema is not supported"}`},
		reply{body: chatBody("```json\n{\"ok\": true}\n```")},
		reply{body: chatBody(`{"ok":false}`)},
	)
	c, _ := newClient(t, api.srv.URL, nil)
	resp, err := c.Chat(context.Background(), structured(memory.StageJudge))
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if resp.Content != `{"ok": true}` {
		t.Errorf("content = %q, want the JSON without its fence", resp.Content)
	}
	// The next call goes straight to json_object.
	if _, err := c.Chat(context.Background(), structured(memory.StageJudge)); err != nil {
		t.Fatalf("second Chat: %v", err)
	}
	reqs := api.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	types := []string{}
	for _, r := range reqs {
		types = append(types, r.body["response_format"].(map[string]any)["type"].(string))
	}
	if fmt.Sprint(types) != "[json_schema json_object json_object]" {
		t.Errorf("response formats = %v", types)
	}
	sys := reqs[1].body["messages"].([]any)[0].(map[string]any)["content"].(string)
	if !strings.HasPrefix(sys, "You judge.") || !strings.Contains(sys, `"additionalProperties":false`) {
		t.Errorf("fallback system prompt does not carry the schema: %q", sys)
	}
}

func TestChatOtherBadRequestDoesNotFallBack(t *testing.T) {
	api := newFakeAPI(t, reply{status: 400, body: `{"error":{"message":"This model's maximum context length is 8192 tokens."}}`})
	c, _ := newClient(t, api.srv.URL, nil)
	_, err := c.Chat(context.Background(), structured(memory.StageJudge))
	if !memory.IsInvalid(err) || !strings.Contains(err.Error(), "maximum context length") {
		t.Errorf("err = %v", err)
	}
	if len(api.requests()) != 1 {
		t.Errorf("%d requests, want 1", len(api.requests()))
	}
}

func TestChatMalformedJSONContent(t *testing.T) {
	api := newFakeAPI(t, reply{body: chatBody(`{"ok": tru`)})
	c, _ := newClient(t, api.srv.URL, nil)
	resp, err := c.Chat(context.Background(), structured(memory.StageJudge))
	if !errors.Is(err, ErrNotJSON) {
		t.Fatalf("err = %v, want ErrNotJSON", err)
	}
	if memory.IsInvalid(err) {
		t.Errorf("a malformed reply is not the caller's fault: %v", err)
	}
	if resp.Usage.PromptTokens != 120 {
		t.Errorf("usage must be reported even for a bad reply: %+v", resp.Usage)
	}
}

func TestChatPlainTextIsNotValidated(t *testing.T) {
	api := newFakeAPI(t, reply{body: chatBody("just words")})
	c, _ := newClient(t, api.srv.URL, nil)
	resp, err := c.Chat(context.Background(), memory.ChatRequest{Stage: memory.StageSummarize, User: "summarise"})
	if err != nil || resp.Content != "just words" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
	if _, ok := api.requests()[0].body["response_format"]; ok {
		t.Error("a request without schema must not set response_format")
	}
}

func TestChatTruncatedAndRefused(t *testing.T) {
	trunc, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": `{"ok":`}, "finish_reason": "length"}}})
	refused, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": nil, "refusal": "I can't help with that."}, "finish_reason": "stop"}}})
	api := newFakeAPI(t, reply{body: string(trunc)}, reply{body: string(refused)})
	c, _ := newClient(t, api.srv.URL, nil)
	_, err := c.Chat(context.Background(), structured(memory.StageJudge))
	if !memory.IsInvalid(err) || !strings.Contains(err.Error(), "max_tokens 200") {
		t.Errorf("truncated: err = %v", err)
	}
	_, err = c.Chat(context.Background(), structured(memory.StageJudge))
	if !memory.IsInvalid(err) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("refused: err = %v", err)
	}
}

func TestChatContextTimeout(t *testing.T) {
	api := newFakeAPI(t, reply{hang: true})
	c, s := newClient(t, api.srv.URL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Chat(ctx, structured(memory.StageJudge))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if len(s.d) != 0 || len(api.requests()) != 1 {
		t.Errorf("a cancelled call must not retry: waits %v, requests %d", s.d, len(api.requests()))
	}
}

func TestChatAttemptTimeoutIsRetried(t *testing.T) {
	api := newFakeAPI(t, reply{hang: true}, reply{body: chatBody(`{"ok":true}`)})
	c, s := newClient(t, api.srv.URL, func(c *Config) { c.Timeout = 50 * time.Millisecond })
	resp, err := c.Chat(context.Background(), structured(memory.StageJudge))
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if resp.Content != `{"ok":true}` || len(s.d) != 1 {
		t.Errorf("content %q waits %v", resp.Content, s.d)
	}
}

func TestUnreachableBaseURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens here any more
	c, s := newClient(t, "http://"+addr, func(c *Config) { c.MaxRetries = 1 })
	_, err = c.Chat(context.Background(), structured(memory.StageJudge))
	if err == nil {
		t.Fatal("Chat succeeded")
	}
	for _, want := range []string{"no answer from http://" + addr + "/v1 after 2 attempts", "check the base URL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if len(s.d) != 1 {
		t.Errorf("waits = %v, want one retry", s.d)
	}
}

func embedBody(vecs ...[]float32) string {
	data := []any{}
	// Answer in reverse order to check that the client sorts by index.
	for i := len(vecs) - 1; i >= 0; i-- {
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": vecs[i]})
	}
	b, _ := json.Marshal(map[string]any{"object": "list", "data": data, "model": "embed-test"})
	return string(b)
}

func TestEmbedBatchesNormalisesAndOrders(t *testing.T) {
	api := newFakeAPI(t,
		reply{body: embedBody([]float32{3, 4, 0, 0}, []float32{0, 0, 2, 0})},
		reply{body: embedBody([]float32{1, 1, 1, 1})},
	)
	c, _ := newClient(t, api.srv.URL, func(c *Config) { c.EmbeddingBatch = 2; c.RequestDimensions = true })
	vecs, err := c.Embed(context.Background(), []string{"a", "", "c"})
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	want := [][]float32{{0.6, 0.8, 0, 0}, {0, 0, 1, 0}, {0.5, 0.5, 0.5, 0.5}}
	for i := range want {
		for j := range want[i] {
			if math.Abs(float64(vecs[i][j]-want[i][j])) > 1e-6 {
				t.Fatalf("vecs = %v, want %v", vecs, want)
			}
		}
	}
	reqs := api.requests()
	if len(reqs) != 2 || reqs[0].path != "/v1/embeddings" {
		t.Fatalf("requests = %+v", reqs)
	}
	if in := reqs[0].body["input"].([]any); len(in) != 2 || in[1] != " " {
		t.Errorf("first batch input = %v (empty text must be sent as a blank)", in)
	}
	if reqs[0].body["dimensions"] != float64(4) || reqs[0].body["model"] != "embed-test" {
		t.Errorf("request = %v", reqs[0].body)
	}
	if c.Dim() != 4 || c.Model() != "openai:embed-test@4" {
		t.Errorf("Dim %d Model %q", c.Dim(), c.Model())
	}
}

func TestEmbedDimensionMismatch(t *testing.T) {
	api := newFakeAPI(t, reply{body: embedBody([]float32{1, 2, 3})})
	c, _ := newClient(t, api.srv.URL, nil)
	_, err := c.Embed(context.Background(), []string{"x"})
	if !memory.IsInvalid(err) || !strings.Contains(err.Error(), "returned 3-dimensional vectors but EmbeddingDim is 4") {
		t.Errorf("err = %v", err)
	}
}

func TestEmbedCountMismatch(t *testing.T) {
	api := newFakeAPI(t, reply{body: embedBody([]float32{1, 0, 0, 0})})
	c, _ := newClient(t, api.srv.URL, nil)
	if _, err := c.Embed(context.Background(), []string{"x", "y"}); err == nil || !strings.Contains(err.Error(), "asked for 2 vectors, got 1") {
		t.Errorf("err = %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" for valid
	}{
		{"defaults need a key for OpenAI", Config{}, "API key is required"},
		{"openai with key", Config{APIKey: "sk-x"}, ""},
		{"ollama without key", Config{BaseURL: "http://localhost:11434/v1/", Model: "qwen2.5:14b", EmbeddingModel: "nomic-embed-text"}, ""},
		{"not a URL", Config{BaseURL: "localhost:11434", APIKey: "k"}, "not an http(s) URL"},
		{"unknown embedding dim", Config{BaseURL: "http://vllm:8000/v1", EmbeddingModel: "my-embedder"}, "set EmbeddingDim"},
		{"bad stage", Config{APIKey: "k", StageModels: map[memory.Stage]string{"merge": "x"}}, `unknown stage "merge"`},
		{"bad model name", Config{APIKey: "k", Model: "gpt 4"}, "not a model name"},
		{"backoff order", Config{APIKey: "k", BackoffBase: time.Minute, BackoffMax: time.Second}, "base <= max"},
		{"batch too big", Config{APIKey: "k", EmbeddingBatch: 5000}, "EmbeddingBatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if tt.want == "" {
				if err != nil {
					t.Errorf("New: %v", err)
				}
				return
			}
			if !memory.IsInvalid(err) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want EINVALID mentioning %q", err, tt.want)
			}
		})
	}
	c, err := New(Config{BaseURL: "http://localhost:11434/v1/", EmbeddingModel: "nomic-embed-text"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Config().BaseURL != "http://localhost:11434/v1" || c.Dim() != 768 || c.Config().ModelFor(memory.StageQuery) != DefaultModel {
		t.Errorf("defaults: %+v", c.Config())
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h := http.Header{}
	h.Set("Retry-After", now.Add(30*time.Second).Format(http.TimeFormat))
	if got := retryAfter(h, now); got != 30*time.Second {
		t.Errorf("HTTP date: %s", got)
	}
	h = http.Header{}
	h.Set("Retry-After", "1.5")
	if got := retryAfter(h, now); got != 1500*time.Millisecond {
		t.Errorf("seconds: %s", got)
	}
	h.Set("Retry-After-Ms", "250")
	if got := retryAfter(h, now); got != 250*time.Millisecond {
		t.Errorf("ms wins: %s", got)
	}
	if got := retryAfter(http.Header{}, now); got != 0 {
		t.Errorf("none: %s", got)
	}
}
