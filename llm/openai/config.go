package openai

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// Defaults applied by Config.WithDefaults.
const (
	DefaultBaseURL        = "https://api.openai.com/v1"
	DefaultModel          = "gpt-4o-mini"
	DefaultEmbeddingModel = "text-embedding-3-small"
	DefaultEmbeddingBatch = 64
	DefaultTimeout        = 60 * time.Second
	DefaultMaxRetries     = 3
	DefaultBackoffBase    = 500 * time.Millisecond
	DefaultBackoffMax     = 20 * time.Second
	DefaultMaxRetryAfter  = 60 * time.Second
)

// knownEmbeddingDims are the native dimensions of common embedding models,
// so that EmbeddingDim can be left at zero for them.
var knownEmbeddingDims = map[string]int{
	"text-embedding-3-small": 1536,
	"text-embedding-3-large": 3072,
	"text-embedding-ada-002": 1536,
	"nomic-embed-text":       768,
	"mxbai-embed-large":      1024,
	"bge-m3":                 1024,
}

// Config configures a Client. Start from the zero value, set what you need
// and let New apply WithDefaults and Validate.
type Config struct {
	// BaseURL is the API root including its version segment, e.g.
	// "https://api.openai.com/v1", "http://localhost:11434/v1" (Ollama) or
	// "http://vllm:8000/v1". Requests go to BaseURL+"/chat/completions" and
	// BaseURL+"/embeddings".
	BaseURL string
	// APIKey is sent as a bearer token. It is required for api.openai.com;
	// local servers usually accept any or none.
	APIKey string

	// Model is the chat model of every stage without an entry in
	// StageModels.
	Model string
	// StageModels picks a model per pipeline stage (memory.StageExtract,
	// StageJudge, StageSummarize, StageQuery), e.g. a strong model to
	// extract and a cheap one to judge merges.
	StageModels map[memory.Stage]string

	// EmbeddingModel names the embedding model.
	EmbeddingModel string
	// EmbeddingDim is the dimension every returned vector must have. Zero
	// means the model's native dimension, which must then be known (see
	// knownEmbeddingDims); local models need it set.
	EmbeddingDim int
	// RequestDimensions sends EmbeddingDim as the "dimensions" parameter,
	// for models that can shorten their vectors (text-embedding-3-*).
	RequestDimensions bool
	// EmbeddingBatch is the most texts sent in one embeddings request.
	EmbeddingBatch int

	// Timeout bounds one HTTP attempt (not the whole call with retries;
	// bound that with the context).
	Timeout time.Duration
	// MaxRetries is how many times a transient failure (429, 5xx, timeout,
	// connection error) is retried after the first attempt. Negative
	// disables retries; zero means DefaultMaxRetries.
	MaxRetries int
	// BackoffBase and BackoffMax shape the exponential backoff between
	// retries: attempt n waits a random time in [d/2, d] where
	// d = min(BackoffBase·2ⁿ, BackoffMax).
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// MaxRetryAfter caps how long a server's Retry-After may make us wait.
	MaxRetryAfter time.Duration

	// HTTPClient sends the requests; nil means a client without a global
	// timeout (Timeout applies per attempt through the request context).
	HTTPClient *http.Client
	// Sleep waits between retries and must return early with ctx's error
	// when ctx is done. Nil means a timer. Tests inject a recorder that
	// returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
}

// WithDefaults returns c with every unset field set to its default.
func (c Config) WithDefaults() Config {
	c.BaseURL = strings.TrimRight(strings.TrimSpace(c.BaseURL), "/")
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.EmbeddingModel == "" {
		c.EmbeddingModel = DefaultEmbeddingModel
	}
	if c.EmbeddingDim == 0 {
		c.EmbeddingDim = knownEmbeddingDims[c.EmbeddingModel]
	}
	if c.EmbeddingBatch == 0 {
		c.EmbeddingBatch = DefaultEmbeddingBatch
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	if c.BackoffBase == 0 {
		c.BackoffBase = DefaultBackoffBase
	}
	if c.BackoffMax == 0 {
		c.BackoffMax = DefaultBackoffMax
	}
	if c.MaxRetryAfter == 0 {
		c.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.Sleep == nil {
		c.Sleep = sleep
	}
	return c
}

var stageNames = []memory.Stage{memory.StageExtract, memory.StageJudge, memory.StageSummarize, memory.StageQuery}

// modelNameRE accepts the model names seen in the wild ("gpt-4o-mini",
// "qwen2.5:14b", "deepseek-ai/DeepSeek-V3", "models/foo@2024") while
// rejecting spaces and control characters that point at a config mistake.
var modelNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$`)

// Validate reports the first problem with c (after WithDefaults) as an
// EINVALID error that says what to fix.
func (c Config) Validate() error {
	const op = "openai: config"
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return memory.Invalidf(op, "base URL %q is not an http(s) URL like %s or http://localhost:11434/v1", c.BaseURL, DefaultBaseURL)
	}
	if c.APIKey == "" && strings.EqualFold(u.Hostname(), "api.openai.com") {
		return memory.Invalidf(op, "an API key is required for %s: set Config.APIKey (usually from OPENAI_API_KEY)", c.BaseURL)
	}
	if strings.ContainsAny(c.APIKey, "\r\n") {
		return memory.Invalidf(op, "the API key contains a line break: check how it was read")
	}
	if !modelNameRE.MatchString(c.Model) {
		return memory.Invalidf(op, "chat model %q is not a model name", c.Model)
	}
	stages := make([]memory.Stage, 0, len(c.StageModels))
	for s := range c.StageModels {
		stages = append(stages, s)
	}
	slices.Sort(stages) // report the same problem first every time
	for _, s := range stages {
		if !slices.Contains(stageNames, s) {
			return memory.Invalidf(op, "unknown stage %q in StageModels: use extract, judge, summarize or query", s)
		}
		if m := c.StageModels[s]; m != "" && !modelNameRE.MatchString(m) {
			return memory.Invalidf(op, "model %q for stage %s is not a model name", m, s)
		}
	}
	if !modelNameRE.MatchString(c.EmbeddingModel) {
		return memory.Invalidf(op, "embedding model %q is not a model name", c.EmbeddingModel)
	}
	if c.EmbeddingDim <= 0 {
		return memory.Invalidf(op, "the dimension of embedding model %q is not known: set EmbeddingDim to the length of its vectors", c.EmbeddingModel)
	}
	if c.EmbeddingBatch < 1 || c.EmbeddingBatch > 2048 {
		return memory.Invalidf(op, "EmbeddingBatch %d is out of range: use 1..2048", c.EmbeddingBatch)
	}
	if c.Timeout < 0 {
		return memory.Invalidf(op, "Timeout %s is negative", c.Timeout)
	}
	if c.BackoffBase < 0 || c.BackoffMax < c.BackoffBase {
		return memory.Invalidf(op, "backoff base %s and max %s must satisfy 0 <= base <= max", c.BackoffBase, c.BackoffMax)
	}
	if c.MaxRetryAfter < 0 {
		return memory.Invalidf(op, "MaxRetryAfter %s is negative", c.MaxRetryAfter)
	}
	return nil
}

// ModelFor returns the chat model of a stage.
func (c Config) ModelFor(s memory.Stage) string {
	if m := c.StageModels[s]; m != "" {
		return m
	}
	return c.Model
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
