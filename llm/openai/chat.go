package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/runes"
)

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type jsonSchemaFormat struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

type responseFormat struct {
	Type       string            `json:"type"`
	JSONSchema *jsonSchemaFormat `json:"json_schema,omitempty"`
}

type chatRequest struct {
	Model          string          `json:"model"`
	Messages       []chatMessage   `json:"messages"`
	Temperature    float64         `json:"temperature"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal string  `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

var schemaNameRE = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// Chat runs one chat completion with the stage's model. With a schema it
// asks for strict JSON-schema output; a server that does not support
// json_schema is asked once more with json_object and the schema spelled
// out in the system prompt (and is not offered json_schema again). The
// reply must parse as JSON, else the error wraps ErrNotJSON.
//
// Errors: EINVALID when the server rejects the request for good (bad
// request, key, model; the message carries the server's words and the
// model), when the reply was cut at MaxTokens, or when the model refused.
// Other errors (throttling or outages outlasting the retries, malformed
// replies) are worth retrying later.
func (c *Client) Chat(ctx context.Context, r memory.ChatRequest) (memory.ChatResponse, error) {
	const op = "openai: chat"
	model := c.cfg.ModelFor(r.Stage)
	structured := len(r.Schema) > 0
	if structured && !json.Valid(r.Schema) {
		return memory.ChatResponse{}, memory.Invalidf(op, "the %s schema is not valid JSON", r.Stage)
	}
	req := chatRequest{Model: model, Temperature: r.Temperature, MaxTokens: r.MaxTokens}
	if r.System != "" {
		req.Messages = append(req.Messages, chatMessage{Role: "system", Content: r.System})
	}
	req.Messages = append(req.Messages, chatMessage{Role: "user", Content: r.User})

	// jsonObject asks for "some JSON object" with the schema in the prompt.
	jsonObject := func() ([]byte, error) {
		req.ResponseFormat = &responseFormat{Type: "json_object"}
		req.Messages = withSchemaInstructions(req.Messages, r.Schema)
		return c.post(ctx, op, c.chatURL, model, req)
	}
	var data []byte
	var err error
	switch {
	case !structured:
		data, err = c.post(ctx, op, c.chatURL, model, req)
	case c.noJSONSch.Load():
		data, err = jsonObject()
	default:
		name := schemaNameRE.ReplaceAllString(r.SchemaName, "_")
		if name == "" {
			name = "response"
		}
		req.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchemaFormat{Name: runes.Clip(name, 64), Schema: r.Schema, Strict: true}}
		data, err = c.post(ctx, op, c.chatURL, model, req)
		if err != nil && jsonSchemaUnsupported(err) {
			c.noJSONSch.Store(true)
			data, err = jsonObject()
		}
	}
	if err != nil {
		return memory.ChatResponse{}, err
	}
	return parseChat(op, model, data, structured, r.MaxTokens)
}

// jsonSchemaUnsupported recognises a server refusing response_format
// json_schema (older vLLM, some gateways), as opposed to refusing the
// request for another reason.
func jsonSchemaUnsupported(err error) bool {
	var se *StatusError
	if !errors.As(err, &se) || (se.StatusCode != 400 && se.StatusCode != 422 && se.StatusCode != 501) {
		return false
	}
	m := strings.ToLower(se.Message)
	return strings.Contains(m, "response_format") || strings.Contains(m, "json_schema") ||
		strings.Contains(m, "structured output") || strings.Contains(m, "response format")
}

// withSchemaInstructions adds the schema to the system message, for
// servers that only guarantee "some JSON object".
func withSchemaInstructions(msgs []chatMessage, schema json.RawMessage) []chatMessage {
	var b bytes.Buffer
	if json.Compact(&b, schema) != nil {
		b.Reset()
		b.Write(schema)
	}
	note := "Reply with one JSON object and nothing else. It must validate against this JSON schema:\n" + b.String()
	out := make([]chatMessage, 0, len(msgs)+1)
	if len(msgs) > 0 && msgs[0].Role == "system" {
		out = append(out, chatMessage{Role: "system", Content: msgs[0].Content + "\n\n" + note})
		return append(out, msgs[1:]...)
	}
	out = append(out, chatMessage{Role: "system", Content: note})
	return append(out, msgs...)
}

func parseChat(op, model string, data []byte, structured bool, maxTokens int) (memory.ChatResponse, error) {
	var resp chatResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		return memory.ChatResponse{}, fmt.Errorf("%s: model %s: the answer is not a chat completion: %w", op, model, err)
	}
	out := memory.ChatResponse{Model: model, Usage: memory.TokenUsage{
		PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
	}}
	if resp.Model != "" {
		out.Model = resp.Model
	}
	if len(resp.Choices) == 0 {
		return out, fmt.Errorf("%s: model %s: the answer has no choices", op, model)
	}
	ch := resp.Choices[0]
	if ch.Message.Refusal != "" {
		return out, memory.Invalidf(op, "model %s refused: %s", model, runes.Clip(ch.Message.Refusal, 300))
	}
	if ch.FinishReason == "length" {
		return out, memory.Invalidf(op, "model %s stopped at the token limit (max_tokens %d) before finishing: raise MaxTokens or shorten the prompt", model, maxTokens)
	}
	if ch.Message.Content == nil || strings.TrimSpace(*ch.Message.Content) == "" {
		return out, fmt.Errorf("%s: model %s: the answer is empty (finish_reason %q)", op, model, ch.FinishReason)
	}
	out.Content = *ch.Message.Content
	if structured {
		out.Content = stripFences(out.Content)
		if !json.Valid([]byte(out.Content)) {
			return out, fmt.Errorf("%s: model %s: %w: %s", op, model, ErrNotJSON, runes.Clip(out.Content, 200))
		}
	}
	return out, nil
}

// stripFences removes a Markdown code fence around JSON, which some models
// add in json_object mode.
func stripFences(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") {
		return s
	}
	s = strings.TrimPrefix(s, "```")
	if i := strings.IndexByte(s, '\n'); i >= 0 && !strings.ContainsAny(s[:i], "{[") {
		s = s[i+1:] // the language tag line
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "```"))
}
