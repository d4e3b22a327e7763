package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"strings"

	"github.com/hindsight-memory/hindsight/memory"
)

// JSONRetry says how often AskJSON asks and how it words a retry.
type JSONRetry struct {
	// Attempts is how many answers AskJSON asks for at most; below 1
	// counts as 1.
	Attempts int
	// Follow names what a retried answer must follow, in the retry's
	// last sentence: "Answer again with one JSON object that follows
	// <Follow>." Default "the schema". It is part of the prompt, so a
	// caller that changes it changes its prompt version.
	Follow string
}

// JSONAnswer is what AskJSON got from the model.
type JSONAnswer[T any] struct {
	// Value is the accepted answer, the zero T when OK is false.
	Value T
	// OK reports whether an answer was accepted.
	OK bool
	// Problem says why the last answer was rejected when OK is false.
	Problem string
	// Model is the model named by the last response that named one, ""
	// when none did.
	Model string
	// Usage sums the tokens of every call, a failed one included.
	Usage memory.TokenUsage
}

// AskJSON asks model for a JSON answer to req (which should carry the
// schema) and decodes it with parse.
//
// parse gets the answer with any Markdown code fence around it removed
// (some models add one even when asked for JSON) and returns the value,
// or an error that says what is wrong in words the model can act on. A
// rejected answer is asked for again, with req.User followed by "Your
// previous answer was rejected: <error>. Answer again with …", until
// retry.Attempts answers have been refused; then AskJSON returns OK false
// and the last Problem, and what to do without an answer is the caller's
// decision. The same prompt at the same temperature would likely be
// refused again, so an invalid answer is never an error.
//
// An error from the model call itself (network, throttling, EINVALID from
// the client) ends AskJSON at once and is returned unwrapped, with the
// usage so far, so that the caller can wrap it and keep its code.
func AskJSON[T any](ctx context.Context, model memory.LLM, req memory.ChatRequest, retry JSONRetry, parse func(content string) (T, error)) (JSONAnswer[T], error) {
	follow := cmp.Or(retry.Follow, "the schema")
	user := req.User
	var out JSONAnswer[T]
	for i := range max(retry.Attempts, 1) {
		if i > 0 { // the previous answer was rejected
			req.User = user + "\n\nYour previous answer was rejected: " + out.Problem + ". Answer again with one JSON object that follows " + follow + "."
		}
		resp, err := model.Chat(ctx, req)
		out.Usage.PromptTokens += resp.Usage.PromptTokens
		out.Usage.CompletionTokens += resp.Usage.CompletionTokens
		if resp.Model != "" {
			out.Model = resp.Model
		}
		if err != nil {
			return out, err
		}
		v, perr := parse(trimFences(resp.Content))
		if perr != nil {
			out.Problem = perr.Error()
			continue
		}
		out.Value, out.OK, out.Problem = v, true, ""
		return out, nil
	}
	return out, nil
}

// trimFences drops a Markdown code fence around JSON: "```json\n{…}\n```"
// gives "{…}".
func trimFences(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") {
		return s
	}
	s = strings.TrimPrefix(s, "```")
	if i := strings.IndexByte(s, '\n'); i >= 0 && !strings.ContainsAny(s[:i], "{[") {
		s = s[i+1:]
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "```"))
}

// EncodePrompt writes v as the JSON document of a user prompt, indented
// with indent, without a trailing newline. Data goes into prompts as JSON
// string values so that the model can tell it from instructions; HTML
// escaping is off so that "<", ">" and "&" in the data reach the model as
// written rather than as \u003c.
func EncodePrompt(v any, indent string) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
}
