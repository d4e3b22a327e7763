package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/runes"
)

// maxResponseBytes bounds how much of an answer is read; embeddings of a
// full batch of 3072-dimensional vectors stay well below it.
const maxResponseBytes = 64 << 20

// Client talks to one OpenAI-compatible endpoint. It is safe for
// concurrent use.
type Client struct {
	cfg       Config
	chatURL   string
	embedURL  string
	jitter    func() float64 // in [0,1); replaceable in tests
	noJSONSch atomic.Bool    // the server rejected json_schema once: go straight to json_object
}

var (
	_ memory.LLM      = (*Client)(nil)
	_ memory.Embedder = (*Client)(nil)
)

// New returns a client for cfg after applying defaults and validating it.
func New(cfg Config) (*Client, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Client{
		cfg:      cfg,
		chatURL:  cfg.BaseURL + "/chat/completions",
		embedURL: cfg.BaseURL + "/embeddings",
		jitter:   rand.Float64,
	}, nil
}

// Config returns the client's effective configuration (with defaults).
func (c *Client) Config() Config { return c.cfg }

// StatusError is an error answer from the server.
type StatusError struct {
	StatusCode int
	Message    string // the server's own message, when it sent one
	Type       string // OpenAI's error type, e.g. "invalid_request_error"
	Code       string // OpenAI's error code, e.g. "model_not_found"
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.StatusCode)
	}
	return fmt.Sprintf("HTTP %d: %s", e.StatusCode, msg)
}

// retryable reports whether trying again later may succeed.
func (e *StatusError) retryable() bool {
	return e.StatusCode == http.StatusTooManyRequests || e.StatusCode == http.StatusRequestTimeout ||
		e.StatusCode == http.StatusConflict || e.StatusCode >= 500
}

// ErrNotJSON is wrapped by Chat errors when a structured-output reply does
// not parse as JSON. Retrying the call may help; the request is not at
// fault.
var ErrNotJSON = errors.New("the reply is not valid JSON")

// post sends body to url and returns the answer's body, retrying transient
// failures. op and model name the call in errors.
func (c *Client) post(ctx context.Context, op, url, model string, body any) ([]byte, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("%s: encode request: %w", op, err)
	}
	retries := max(c.cfg.MaxRetries, 0)
	for attempt := 0; ; attempt++ {
		data, err := c.once(ctx, url, payload)
		if err == nil {
			return data, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: model %s: %w", op, model, ctx.Err())
		}
		var se *StatusError
		isStatus := errors.As(err, &se)
		if isStatus && !se.retryable() {
			return nil, rejected(op, model, se)
		}
		if attempt >= retries {
			if isStatus {
				return nil, fmt.Errorf("%s: model %s: giving up after %d attempts: %w", op, model, attempt+1, err)
			}
			return nil, fmt.Errorf("%s: model %s: no answer from %s after %d attempts (check the base URL and that the server is running): %w", op, model, c.cfg.BaseURL, attempt+1, err)
		}
		wait := c.backoff(attempt)
		if isStatus && se.RetryAfter > 0 {
			wait = min(se.RetryAfter, c.cfg.MaxRetryAfter)
		}
		if err := c.cfg.Sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("%s: model %s: waiting to retry: %w", op, model, err)
		}
	}
}

// backoff is the wait before retry attempt+1: exponential with jitter in
// [d/2, d], so that clients throttled together do not retry together.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.cfg.BackoffBase
	for range attempt {
		d *= 2
		if d >= c.cfg.BackoffMax {
			d = c.cfg.BackoffMax
			break
		}
	}
	d = min(d, c.cfg.BackoffMax)
	return d/2 + time.Duration(c.jitter()*float64(d/2))
}

// once makes one HTTP attempt bounded by Config.Timeout.
func (c *Client) once(ctx context.Context, url string, payload []byte) ([]byte, error) {
	actx := ctx
	if c.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(actx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("no answer within %s (Config.Timeout): %w", c.cfg.Timeout, err)
		}
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, fmt.Errorf("read answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		se := parseError(resp.StatusCode, data)
		se.RetryAfter = retryAfter(resp.Header, time.Now())
		return nil, se
	}
	return data, nil
}

// rejected turns a non-retryable status into an EINVALID error that says
// what the server objected to and which model was asked.
func rejected(op, model string, se *StatusError) error {
	var hint string
	switch se.StatusCode {
	case http.StatusUnauthorized:
		hint = "the server rejected the API key; check Config.APIKey"
	case http.StatusForbidden:
		hint = "the API key may not use this model or endpoint"
	case http.StatusNotFound:
		hint = "unknown model or wrong base URL (it should end in the API version, e.g. /v1)"
	default:
		hint = "the server rejected the request"
	}
	return &memory.Error{Code: memory.EINVALID, Op: op, Message: fmt.Sprintf("model %s: %s", model, hint), Err: se}
}

// parseError reads the error shapes of OpenAI ({"error":{"message":…}}),
// Ollama ({"error":"…"}) and FastAPI-based servers ({"detail":…}).
func parseError(status int, body []byte) *StatusError {
	se := &StatusError{StatusCode: status}
	var w struct {
		Error   json.RawMessage `json:"error"`
		Detail  json.RawMessage `json:"detail"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &w) == nil {
		var obj struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		}
		var s string
		switch {
		case json.Unmarshal(w.Error, &obj) == nil && obj.Message != "":
			se.Message, se.Type = obj.Message, obj.Type
			se.Code = strings.Trim(string(obj.Code), `"`)
			if se.Code == "null" {
				se.Code = ""
			}
		case json.Unmarshal(w.Error, &s) == nil && s != "":
			se.Message = s
		case json.Unmarshal(w.Detail, &s) == nil && s != "":
			se.Message = s
		case len(w.Detail) > 0:
			se.Message = string(w.Detail)
		case w.Message != "":
			se.Message = w.Message
		}
	}
	if se.Message == "" {
		se.Message = strings.TrimSpace(string(body))
	}
	se.Message = runes.Clip(se.Message, 500)
	return se
}

// retryAfter reads retry-after-ms (OpenAI) or Retry-After (seconds or an
// HTTP date).
func retryAfter(h http.Header, now time.Time) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
