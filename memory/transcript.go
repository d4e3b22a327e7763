package memory

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hindsight-memory/hindsight/runes"
)

// Transcript limits. They protect the pipeline from pathological input; the
// error says which limit was hit.
const (
	MaxEvents       = 20000
	MaxEventContent = 256 << 10
	MaxCallID       = 256
)

// wireTranscript is the accepted JSON: Hindsight's own format (events) or
// an OpenAI-style chat (messages), with optional session metadata.
type wireTranscript struct {
	SessionID json.RawMessage `json:"session_id"`
	Tenant    string          `json:"tenant"`
	UserID    string          `json:"user_id"`
	Agent     string          `json:"agent"`
	Task      string          `json:"task"`
	StartedAt json.RawMessage `json:"started_at"`
	EndedAt   json.RawMessage `json:"ended_at"`
	Outcome   string          `json:"outcome"`
	Events    []wireEvent     `json:"events"`
	Messages  []wireMessage   `json:"messages"`
}

type wireEvent struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	TS         json.RawMessage `json:"ts"`
	ToolName   string          `json:"tool_name"`
	ToolArgs   json.RawMessage `json:"tool_args"`
	ToolResult json.RawMessage `json:"tool_result"`
	Error      json.RawMessage `json:"error"`
	CallID     json.RawMessage `json:"call_id"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// ParseTranscript reads a transcript in Hindsight's format, an object with
// an OpenAI-style "messages" array, a bare messages array, a Claude Code
// session log or a Codex rollout log (JSON lines; see ParseClaudeCode and
// ParseCodex), telling them apart by their content. Times without
// a zone are in loc (nil: UTC; see ParseTime). The result is not yet
// normalised; call Transcript.Normalize.
func ParseTranscript(data []byte, loc *time.Location) (Transcript, error) {
	const op = "parse transcript"
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return Transcript{}, Invalidf(op, "the transcript is empty")
	}
	if format, ok := isJSONLog(data); ok {
		if format == FormatCodex {
			return ParseCodex(data, loc)
		}
		return ParseClaudeCode(data, loc)
	}
	var w wireTranscript
	if data[0] == '[' {
		if err := json.Unmarshal(data, &w.Messages); err != nil {
			return Transcript{}, Invalidf(op, "a bare array must be OpenAI-style messages [{\"role\":…,\"content\":…}]: %v", err)
		}
	} else if err := json.Unmarshal(data, &w); err != nil {
		return Transcript{}, Invalidf(op, "not a JSON object with session_id and events: %v", err)
	}
	t := Transcript{Tenant: w.Tenant, UserID: w.UserID, Agent: w.Agent, Task: w.Task, Outcome: Outcome(strings.ToLower(w.Outcome)), Format: FormatHindsight}
	var err error
	if t.SessionID, err = rawString(w.SessionID); err != nil {
		return Transcript{}, Invalidf(op, "session_id: %v", err)
	}
	if t.StartedAt, err = parseTime(w.StartedAt, loc); err != nil {
		return Transcript{}, Invalidf(op, "started_at: %v", err)
	}
	if t.EndedAt, err = parseTime(w.EndedAt, loc); err != nil {
		return Transcript{}, Invalidf(op, "ended_at: %v", err)
	}
	if len(w.Events) > 0 && len(w.Messages) > 0 {
		return Transcript{}, Invalidf(op, "give either events or messages, not both")
	}
	for i, we := range w.Events {
		e := Event{Role: Role(strings.ToLower(we.Role)), ToolName: we.ToolName}
		if e.Content, err = textOf(we.Content); err != nil {
			return Transcript{}, Invalidf(op, "events[%d].content: %v", i, err)
		}
		if e.TS, err = parseTime(we.TS, loc); err != nil {
			return Transcript{}, Invalidf(op, "events[%d].ts: %v", i, err)
		}
		e.ToolArgs = argsText(we.ToolArgs)
		if e.CallID, err = rawString(we.CallID); err != nil {
			return Transcript{}, Invalidf(op, "events[%d].call_id: %v", i, err)
		}
		if e.ToolResult, err = textOf(we.ToolResult); err != nil {
			e.ToolResult = verbatim(we.ToolResult)
		}
		if e.Error, err = textOf(we.Error); err != nil {
			e.Error = verbatim(we.Error)
		}
		t.Events = append(t.Events, e)
	}
	if len(w.Messages) > 0 {
		t.Format = FormatOpenAI
		if t.Events, err = eventsFromMessages(w.Messages); err != nil {
			return Transcript{}, err
		}
		if t.SessionID == "" {
			// A bare chat has no session ID; derive one from its content so
			// that submitting the same chat twice is still one session.
			sum := sha256.Sum256(data)
			t.SessionID = "chat-" + hex.EncodeToString(sum[:8])
		}
	}
	return t, nil
}

func eventsFromMessages(msgs []wireMessage) ([]Event, error) {
	const op = "parse transcript"
	var out []Event
	toolNames := map[string]string{}
	for i, m := range msgs {
		role := strings.ToLower(m.Role)
		if role == "developer" {
			role = string(RoleSystem)
		}
		if role == "function" {
			role = string(RoleTool)
		}
		content, err := textOf(m.Content)
		if err != nil {
			return nil, Invalidf(op, "messages[%d].content: %v", i, err)
		}
		if len(m.ToolCalls) == 0 {
			e := Event{Role: Role(role), Content: content}
			if e.Role == RoleTool {
				e.ToolName = cmpOr(toolNames[m.ToolCallID], m.Name)
				e.ToolResult = content
				e.CallID = m.ToolCallID
			}
			out = append(out, e)
			continue
		}
		for j, c := range m.ToolCalls {
			e := Event{Role: Role(role), ToolName: c.Function.Name, ToolArgs: argsText(c.Function.Arguments), CallID: c.ID}
			if j == 0 {
				e.Content = content
			}
			toolNames[c.ID] = c.Function.Name
			out = append(out, e)
		}
	}
	return out, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Normalize validates a transcript and completes it: tenant (defaultTenant
// when empty), sequence numbers, event IDs, timestamps (events without one
// take the previous event's, then the session's start, then now), outcome.
// The error names the first thing to fix.
func (t *Transcript) Normalize(defaultTenant string, now time.Time) error {
	const op = "transcript"
	if t.Tenant == "" {
		t.Tenant = defaultTenant
	}
	if err := ValidateTenant(op, t.Tenant); err != nil {
		return err
	}
	if t.SessionID == "" {
		return Invalidf(op, "session_id is required")
	}
	if err := ValidateSessionID(op, t.SessionID); err != nil {
		return err
	}
	for field, v := range map[string]string{"user_id": t.UserID, "agent": t.Agent} {
		if err := CheckName(op, field, v, MaxName); err != nil {
			return err
		}
	}
	if len(t.Task) > MaxTask {
		return Invalidf(op, "task is %d bytes; the limit is %d: say what the session was for in a sentence or two", len(t.Task), MaxTask)
	}
	if len(t.Events) == 0 {
		return Invalidf(op, "session %s has no events: send events (or messages) with at least one entry", t.SessionID)
	}
	if len(t.Events) > MaxEvents {
		return Invalidf(op, "session %s has %d events; the limit is %d: split the session", t.SessionID, len(t.Events), MaxEvents)
	}
	outcome, err := ParseOutcome(string(t.Outcome))
	if err != nil {
		return err
	}
	t.Outcome = outcome
	last := t.StartedAt
	if last.IsZero() {
		last = now
	}
	for i := range t.Events {
		e := &t.Events[i]
		if !e.Role.Valid() {
			return Invalidf(op, "events[%d].role %s is not one of user, assistant, tool, system", i, Quote(string(e.Role)))
		}
		if e.Content == "" && e.ToolName == "" && e.ToolResult == "" && e.Error == "" {
			return Invalidf(op, "events[%d] is empty: give content, tool_name, tool_result or error", i)
		}
		if err := CheckName(op, fmt.Sprintf("events[%d].tool_name", i), e.ToolName, MaxName); err != nil {
			return err
		}
		for name, v := range map[string]string{"content": e.Content, "tool_args": e.ToolArgs, "tool_result": e.ToolResult, "error": e.Error} {
			if len(v) > MaxEventContent {
				return Invalidf(op, "events[%d].%s is %d bytes; the limit is %d", i, name, len(v), MaxEventContent)
			}
		}
		if len(e.CallID) > MaxCallID {
			return Invalidf(op, "events[%d].call_id is %d bytes; the limit is %d", i, len(e.CallID), MaxCallID)
		}
		e.Tenant, e.SessionID, e.UserID, e.Seq = t.Tenant, t.SessionID, t.UserID, i
		e.ID = EventID(t.Tenant, t.SessionID, i)
		if e.TS.IsZero() {
			e.TS = last
		}
		e.TS = e.TS.UTC()
		last = e.TS
	}
	if t.StartedAt.IsZero() {
		t.StartedAt = t.Events[0].TS
	}
	if t.EndedAt.IsZero() {
		t.EndedAt = t.Events[len(t.Events)-1].TS
	}
	t.StartedAt, t.EndedAt = t.StartedAt.UTC(), t.EndedAt.UTC()
	if t.EndedAt.Before(t.StartedAt) {
		return Invalidf(op, "ended_at %s is before started_at %s", t.EndedAt.Format(time.RFC3339), t.StartedAt.Format(time.RFC3339))
	}
	return nil
}

// ParseOutcome reads an outcome, accepting common synonyms ("ok",
// "failed"); empty means unknown.
func ParseOutcome(s string) (Outcome, error) {
	switch o := Outcome(strings.ToLower(strings.TrimSpace(s))); o {
	case "":
		return OutcomeUnknown, nil
	case OutcomeSuccess, OutcomePartial, OutcomeFailure, OutcomeUnknown:
		return o, nil
	case "succeeded", "ok", "done", "completed":
		return OutcomeSuccess, nil
	case "failed", "error":
		return OutcomeFailure, nil
	}
	return "", Invalidf("transcript", "outcome %s is not one of success, partial, failure, unknown", Quote(s))
}

// rawString accepts a JSON string or number (IDs are sometimes numeric).
func rawString(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), nil
	}
	return "", fmt.Errorf("want a string, got %s", runes.Clip(string(raw), 40))
}

// textOf accepts a string, or OpenAI content parts [{"type":"text","text":…}].
func textOf(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err == nil {
		var b []string
		for _, p := range parts {
			if p.Text != "" {
				b = append(b, p.Text)
			}
		}
		return strings.Join(b, "\n"), nil
	}
	return "", fmt.Errorf("want a string or a list of text parts, got %s", runes.Clip(string(raw), 40))
}

// argsText keeps tool arguments as JSON text: an object as compact JSON,
// and a string (OpenAI sends arguments as a JSON-encoded string) as the
// text it holds, so that both spellings of the same call read alike.
func argsText(raw json.RawMessage) string {
	if s, err := rawString(raw); err == nil && len(raw) > 0 && raw[0] == '"' {
		return s
	}
	return verbatim(raw)
}

// verbatim keeps a JSON value as compact text ("" for null).
func verbatim(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// Times without a zone. Every time Hindsight is given (event and session
// timestamps, since and until, and the time words of a query) follows one
// rule: a time with an offset or Z is that instant; a time or a date
// without one is read in the deployment's time zone (HINDSIGHT_TIMEZONE,
// UTC by default), a date as its midnight there. Unix seconds and
// milliseconds are instants.

var timeLayouts = []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"}

// ParseTime reads a time by the rule above, in loc (nil: UTC): RFC 3339,
// the same without a zone, a date, or Unix seconds or milliseconds. The
// result is in UTC.
func ParseTime(s string, loc *time.Location) (time.Time, error) {
	if loc == nil {
		loc = time.UTC
	}
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return inRange(t.UTC(), s)
	}
	for _, layout := range timeLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return inRange(t.UTC(), s)
		}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 || f > maxUnixMilli {
			return time.Time{}, fmt.Errorf("%s is out of range: give Unix seconds or milliseconds between 1970 and 9999, or an RFC 3339 time", runes.Clip(s, 40))
		}
		if f > 1e12 { // milliseconds
			return inRange(time.UnixMilli(int64(f)).UTC(), s)
		}
		sec := int64(f)
		return inRange(time.Unix(sec, int64((f-float64(sec))*1e9)).UTC(), s)
	}
	return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time like 2026-03-01T09:30:00Z or a date like 2026-03-01", runes.Clip(s, 40))
}

// parseTime reads a JSON time (a string or a number) with ParseTime.
func parseTime(raw json.RawMessage, loc *time.Location) (time.Time, error) {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == `""` {
		return time.Time{}, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return time.Time{}, fmt.Errorf("want an RFC 3339 time or Unix seconds, got %s", runes.Clip(string(raw), 40))
		}
		s = n.String()
	}
	return ParseTime(s, loc)
}

// maxUnixMilli is 9999-12-31T23:59:59.999Z in Unix milliseconds.
const maxUnixMilli = 253402300799999

// inRange refuses times before 1970 or after 9999, the zero time among
// them: a timestamp that says 0001-01-01 was not meant, and replacing it
// silently would hide that.
func inRange(t time.Time, raw string) (time.Time, error) {
	if t.Year() < 1970 || t.Year() > 9999 {
		return time.Time{}, fmt.Errorf("%s is out of range: give a time between 1970 and 9999 (or leave it out to use the previous event's)", runes.Clip(raw, 40))
	}
	return t, nil
}
