package memory

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Transcript formats ParseTranscript recognises, by their content.
const (
	FormatHindsight  = "hindsight"   // {"session_id", "events": [...]}
	FormatOpenAI     = "openai"      // OpenAI chat messages
	FormatClaudeCode = "claude-code" // ~/.claude/projects/<project>/<session>.jsonl
	FormatCodex      = "codex"       // ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl
)

// Bounds on what one event of an agent's log keeps. A tool's output (a
// file read, a build log) is cut to MaxToolOutput, and a message to
// MaxMessageText, keeping its head and tail around a marker that gives the
// whole text's length and SHA-256, so a cut is never silent and a real
// session never meets the MaxEventContent limit.
const (
	MaxToolOutput  = 16 << 10
	MaxMessageText = 64 << 10
)

// Reasons a record of an agent's log is left out of the transcript; the
// counts are in Transcript.Dropped.
const (
	DropThinking      = "thinking"              // the model's private reasoning
	DropProgress      = "progress"              // hook and subagent progress records
	DropSnapshot      = "file-history-snapshot" // Claude Code's file backups
	DropQueue         = "queue-operation"       // prompts queued while busy
	DropSystemRecord  = "system-record"         // local command echoes, hook summaries
	DropMeta          = "meta"                  // caveats and expanded skill text the user did not type
	DropCommand       = "local-command"         // /slash commands and their output
	DropReminder      = "system-reminder"       // text the harness adds to a message
	DropEnvironment   = "environment-context"   // Codex's environment and instruction preamble
	DropInstructions  = "instructions"          // developer or system prompts
	DropTurnContext   = "turn-context"          // Codex's per-turn settings
	DropEventMsg      = "event-message"         // Codex's UI events, which repeat the response items
	DropEmpty         = "empty"                 // records with nothing left to say
	DropSummaryRecord = "summary"               // Claude Code's session titles
	DropOther         = "other"                 // record types this parser does not know
)

// isJSONLog reports whether data is a JSON-lines log whose first record
// names an agent's record type, and which format it is.
func isJSONLog(data []byte) (string, bool) {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	var probe struct {
		Type      string          `json:"type"`
		SessionID string          `json:"sessionId"`
		Payload   json.RawMessage `json:"payload"`
		Message   json.RawMessage `json:"message"`
		ID        string          `json:"id"`
		Timestamp string          `json:"timestamp"`
	}
	if json.Unmarshal(bytes.TrimSpace(line), &probe) != nil {
		return "", false
	}
	switch probe.Type {
	case "session_meta", "response_item", "turn_context", "event_msg", "compacted":
		if len(probe.Payload) > 0 {
			return FormatCodex, true
		}
	case "user", "assistant", "progress", "file-history-snapshot", "queue-operation", "system", "summary":
		if probe.SessionID != "" || len(probe.Message) > 0 || probe.Type == "file-history-snapshot" || probe.Type == "summary" {
			return FormatClaudeCode, true
		}
	case "":
		// Codex rollouts before mid-2025: a bare header, then bare items.
		if probe.ID != "" && probe.Timestamp != "" && bytes.Count(data, []byte("\n")) > 0 && len(probe.Message) == 0 {
			if rest := bytes.TrimSpace(data[len(line):]); len(rest) > 0 && bytes.Contains(rest, []byte(`"type"`)) {
				return FormatCodex, true
			}
		}
	}
	return "", false
}

// logLines splits a JSON-lines log, numbering lines from 1 for errors.
func logLines(data []byte, each func(n int, line []byte) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := each(n, line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return Invalidf("parse transcript", "line %d: %v", n+1, err)
	}
	return nil
}

// logBuilder collects the events of an agent's log.
type logBuilder struct {
	t     Transcript
	loc   *time.Location
	tools map[string]string // call ID → tool name
}

func newLogBuilder(format string, loc *time.Location) *logBuilder {
	return &logBuilder{t: Transcript{Format: format, Dropped: map[string]int{}}, loc: loc, tools: map[string]string{}}
}

func (b *logBuilder) drop(reason string) { b.t.Dropped[reason]++ }

func (b *logBuilder) add(e Event) { b.t.Events = append(b.t.Events, e) }

// ts reads a record's timestamp; a bad one is left out (the event takes
// the previous event's), since one odd record must not reject a session.
func (b *logBuilder) ts(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := ParseTime(s, b.loc)
	if err != nil {
		return time.Time{}
	}
	return t
}

func (b *logBuilder) finish(data []byte) (Transcript, error) {
	t := b.t
	if len(t.Dropped) == 0 {
		t.Dropped = nil
	}
	if t.SessionID == "" {
		sum := sha256.Sum256(data)
		t.SessionID = t.Format + "-" + hex.EncodeToString(sum[:8])
	}
	if len(t.Events) == 0 {
		return Transcript{}, Invalidf("parse transcript", "the %s log of session %s holds no conversation (only %s)", t.Format, t.SessionID, droppedSummary(t.Dropped))
	}
	// Records are written in order, but a subagent's file is read after
	// its parent's: order by time, keeping the log's order for ties.
	slices.SortStableFunc(t.Events, func(x, y Event) int {
		if x.TS.IsZero() || y.TS.IsZero() {
			return 0
		}
		return x.TS.Compare(y.TS)
	})
	for _, e := range t.Events {
		if !e.TS.IsZero() {
			if t.StartedAt.IsZero() || e.TS.Before(t.StartedAt) {
				t.StartedAt = e.TS
			}
			if e.TS.After(t.EndedAt) {
				t.EndedAt = e.TS
			}
		}
	}
	return t, nil
}

// droppedSummary writes drop counts for people: "44 progress, 3 thinking".
func droppedSummary(d map[string]int) string {
	if len(d) == 0 {
		return "nothing"
	}
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if d[a] != d[b] {
			return d[b] - d[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", d[k], k)
	}
	return strings.Join(parts, ", ")
}

// DroppedSummary says what an agent's log left out, for people.
func (t Transcript) DroppedSummary() string { return droppedSummary(t.Dropped) }

// bound cuts s to limit bytes, keeping its head and tail (on UTF-8
// boundaries) around a marker with the whole text's length and hash.
func bound(s string, limit int, cut *int) string {
	if len(s) <= limit {
		return s
	}
	*cut++
	const markerRoom = 96 // the marker's length, and some
	keep := max(limit-markerRoom, 64)
	head, start := keep*3/4, len(s)-keep/4
	for head > 0 && !utf8Start(s[head]) {
		head--
	}
	for start < len(s) && !utf8Start(s[start]) {
		start++
	}
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("%s\n[… %d of %d bytes cut here; sha256 %s …]\n%s", s[:head], start-head, len(s), hex.EncodeToString(sum[:8]), s[start:])
}

func utf8Start(c byte) bool { return c&0xC0 != 0x80 }

// Harness text inside messages. A system reminder is added by Claude Code
// to what the user or a tool said; slash commands and their output are
// the user driving the tool, not talking about the work.
var (
	reminderRE     = regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`)
	commandRE      = regexp.MustCompile(`(?s)^\s*<(command-name|command-message|command-args|local-command-stdout|local-command-stderr|local-command-caveat|bash-input|bash-stdout|bash-stderr)>`)
	interruptedRE  = regexp.MustCompile(`^\[Request interrupted by user[^\]]*\]$`)
	environmentRE  = regexp.MustCompile(`(?s)^\s*(<environment_context>|<user_instructions>|<INSTRUCTIONS>|# AGENTS\.md instructions|<permissions instructions>|<user_shell_command>)`)
	codexExitRE    = regexp.MustCompile(`(?m)^(?:Exit code|Process exited with code):?\s*(-?\d+)`)
	codexFailureRE = regexp.MustCompile(`^(?:error|failed|execution error|aborted)\b`)
)

// userText cleans what a user record says, returning "" and the reason
// when nothing of the user's own words is left.
func userText(s string) (string, string) {
	if commandRE.MatchString(s) {
		// A slash command's arguments are the user's words: "/review
		// check the migrations too". Its output and bare commands are not.
		name := tagText(s, "command-name")
		args := tagText(s, "command-args")
		if name == "" || args == "" {
			return "", DropCommand
		}
		return strings.TrimSpace(name + " " + args), ""
	}
	if strings.Contains(s, "<system-reminder>") {
		s = reminderRE.ReplaceAllString(s, "")
		if strings.TrimSpace(s) == "" {
			return "", DropReminder
		}
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", DropEmpty
	}
	return s, ""
}

// ParseClaudeCode reads a Claude Code session log, and the logs of its
// subagents (from the subagents/ folder beside it) when given.
//
// User and assistant text become user and assistant events; a tool_use
// becomes a call with its name and input, and the tool_result that answers
// it (Claude Code writes it as a "user" record) a result, or an error when
// is_error is set, named by the call's ID. Thinking, progress, snapshots,
// queue operations, system records, meta text, slash commands and system
// reminders are left out and counted. A compaction summary is context (a
// system event), not something the user said. Sidechain and subagent
// records are kept, marked "[subagent]", with their prompts as the
// agent's words, not the user's.
func ParseClaudeCode(data []byte, loc *time.Location, subagents ...[]byte) (Transcript, error) {
	b := newLogBuilder(FormatClaudeCode, loc)
	b.t.Agent = "claude-code"
	if err := b.claudeLog(data, false); err != nil {
		return Transcript{}, err
	}
	for i, sub := range subagents {
		if err := b.claudeLog(sub, true); err != nil {
			return Transcript{}, fmt.Errorf("subagent log %d: %w", i+1, err)
		}
	}
	return b.finish(data)
}

type claudeRecord struct {
	Type             string `json:"type"`
	SessionID        string `json:"sessionId"`
	CWD              string `json:"cwd"`
	Timestamp        string `json:"timestamp"`
	IsSidechain      bool   `json:"isSidechain"`
	IsMeta           bool   `json:"isMeta"`
	IsCompactSummary bool   `json:"isCompactSummary"`
	AgentID          string `json:"agentId"`
	Message          struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func (b *logBuilder) claudeLog(data []byte, subagent bool) error {
	return logLines(data, func(n int, line []byte) error {
		var r claudeRecord
		if err := json.Unmarshal(line, &r); err != nil {
			return Invalidf("parse transcript", "claude code log, line %d: not a JSON record: %v", n, err)
		}
		if b.t.SessionID == "" && r.SessionID != "" && !subagent {
			b.t.SessionID = r.SessionID
		}
		if b.t.Project == "" && r.CWD != "" {
			b.t.Project = r.CWD
		}
		switch r.Type {
		case "user", "assistant":
		case "progress":
			b.drop(DropProgress)
			return nil
		case "file-history-snapshot":
			b.drop(DropSnapshot)
			return nil
		case "queue-operation":
			b.drop(DropQueue)
			return nil
		case "system":
			b.drop(DropSystemRecord)
			return nil
		case "summary":
			b.drop(DropSummaryRecord)
			return nil
		default:
			b.drop(DropOther)
			return nil
		}
		ts := b.ts(r.Timestamp)
		side := subagent || r.IsSidechain
		if r.IsMeta {
			b.drop(DropMeta)
			return nil
		}
		var blocks []claudeBlock
		var text string
		if json.Unmarshal(r.Message.Content, &text) != nil {
			if err := json.Unmarshal(r.Message.Content, &blocks); err != nil {
				return Invalidf("parse transcript", "claude code log, line %d: message.content is neither text nor content blocks", n)
			}
		} else {
			blocks = []claudeBlock{{Type: "text", Text: text}}
		}
		for _, bl := range blocks {
			b.claudeBlock(r, bl, ts, side)
		}
		return nil
	})
}

func (b *logBuilder) claudeBlock(r claudeRecord, bl claudeBlock, ts time.Time, side bool) {
	switch bl.Type {
	case "thinking", "redacted_thinking":
		b.drop(DropThinking)
	case "text":
		if r.IsCompactSummary {
			b.add(Event{Role: RoleSystem, TS: ts, Content: "Summary of the conversation before it was compacted (context, not the user's words):\n" + bound(strings.TrimSpace(bl.Text), MaxMessageText, &b.t.Cut)})
			return
		}
		if r.Type == "assistant" {
			s := strings.TrimSpace(reminderRE.ReplaceAllString(bl.Text, ""))
			if s == "" {
				b.drop(DropEmpty)
				return
			}
			b.add(Event{Role: RoleAssistant, TS: ts, Content: mark(side, bound(s, MaxMessageText, &b.t.Cut))})
			return
		}
		s, why := userText(bl.Text)
		if why != "" {
			b.drop(why)
			return
		}
		if interruptedRE.MatchString(s) {
			b.add(Event{Role: RoleSystem, TS: ts, Content: "The user interrupted the assistant."})
			return
		}
		if side {
			// A subagent's "user" is the agent that delegated to it.
			b.add(Event{Role: RoleAssistant, TS: ts, Content: "[subagent] task: " + bound(s, MaxMessageText, &b.t.Cut)})
			return
		}
		b.add(Event{Role: RoleUser, TS: ts, Content: bound(s, MaxMessageText, &b.t.Cut)})
	case "tool_use", "server_tool_use":
		b.tools[bl.ID] = bl.Name
		e := Event{Role: RoleAssistant, TS: ts, ToolName: bl.Name, ToolArgs: bound(verbatim(bl.Input), MaxToolOutput, &b.t.Cut)}
		if side {
			e.Content = "[subagent]"
		}
		b.add(e)
	case "tool_result", "web_search_tool_result":
		out := bound(blockText(bl.Content), MaxToolOutput, &b.t.Cut)
		e := Event{Role: RoleTool, TS: ts, ToolName: cmpOr(b.tools[bl.ToolUseID], "unknown")}
		if bl.IsError {
			e.Error = cmpOr(out, "the tool failed")
		} else {
			e.ToolResult = cmpOr(out, "(no output)")
		}
		if side {
			e.Content = "[subagent]"
		}
		b.add(e)
	case "image", "document":
		b.add(Event{Role: Role(cmpOr(r.Message.Role, r.Type)), TS: ts, Content: "[" + bl.Type + "]"})
	default:
		b.drop(DropOther)
	}
}

// tagText is the text of the first <tag>…</tag> in s.
func tagText(s, tag string) string {
	_, rest, ok := strings.Cut(s, "<"+tag+">")
	if !ok {
		return ""
	}
	body, _, _ := strings.Cut(rest, "</"+tag+">")
	return strings.TrimSpace(body)
}

func mark(side bool, s string) string {
	if side {
		return "[subagent] " + s
	}
	return s
}

// blockText reads a tool_result's content: a string, or blocks whose text
// is kept and whose images are named.
func blockText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []claudeBlock
	if json.Unmarshal(raw, &parts) != nil {
		return verbatim(raw)
	}
	var out []string
	for _, p := range parts {
		switch {
		case p.Text != "":
			out = append(out, p.Text)
		case p.Type != "" && p.Type != "text":
			out = append(out, "["+p.Type+"]")
		}
	}
	return strings.Join(out, "\n")
}

// ParseCodex reads a Codex CLI rollout log.
//
// User and assistant messages become events; function_call and
// custom_tool_call become calls and their outputs results, linked by
// call_id, with a non-zero exit code read as a failure. The session's ID
// and directory come from session_meta, and a compaction is context (a
// system event). Reasoning, turn contexts, UI events (event_msg, which
// repeat the response items), and the environment and instruction
// preamble are left out and counted.
func ParseCodex(data []byte, loc *time.Location) (Transcript, error) {
	b := newLogBuilder(FormatCodex, loc)
	b.t.Agent = "codex"
	err := logLines(data, func(n int, line []byte) error {
		var r struct {
			Type      string          `json:"type"`
			Timestamp string          `json:"timestamp"`
			Payload   json.RawMessage `json:"payload"`
			ID        string          `json:"id"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return Invalidf("parse transcript", "codex log, line %d: not a JSON record: %v", n, err)
		}
		ts := b.ts(r.Timestamp)
		switch {
		case r.Type == "session_meta":
			var m struct {
				ID  string `json:"id"`
				CWD string `json:"cwd"`
			}
			_ = json.Unmarshal(r.Payload, &m)
			if b.t.SessionID == "" {
				b.t.SessionID = m.ID
			}
			if b.t.Project == "" {
				b.t.Project = m.CWD
			}
			return nil
		case r.Type == "turn_context":
			var m struct {
				CWD string `json:"cwd"`
			}
			if json.Unmarshal(r.Payload, &m) == nil && b.t.Project == "" {
				b.t.Project = m.CWD
			}
			b.drop(DropTurnContext)
			return nil
		case r.Type == "event_msg":
			b.drop(DropEventMsg)
			return nil
		case r.Type == "compacted":
			var m struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(r.Payload, &m) == nil && strings.TrimSpace(m.Message) != "" {
				b.add(Event{Role: RoleSystem, TS: ts, Content: "Summary of the conversation before it was compacted (context, not the user's words):\n" + bound(strings.TrimSpace(m.Message), MaxMessageText, &b.t.Cut)})
			} else {
				b.drop(DropEmpty)
			}
			return nil
		case r.Type == "response_item":
			return b.codexItem(n, r.Payload, ts)
		case len(r.Payload) == 0 && r.ID != "" && n == 1:
			// The header of an older rollout: the session's ID.
			b.t.SessionID = r.ID
			return nil
		case len(r.Payload) == 0:
			// An older rollout's bare item.
			return b.codexItem(n, line, ts)
		}
		b.drop(DropOther)
		return nil
	})
	if err != nil {
		return Transcript{}, err
	}
	return b.finish(data)
}

func (b *logBuilder) codexItem(n int, raw json.RawMessage, ts time.Time) error {
	var it struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Name    string          `json:"name"`
		CallID  string          `json:"call_id"`
		Args    json.RawMessage `json:"arguments"`
		Input   json.RawMessage `json:"input"`
		Output  json.RawMessage `json:"output"`
		Action  json.RawMessage `json:"action"`
		Status  string          `json:"status"`
	}
	if err := json.Unmarshal(raw, &it); err != nil {
		return Invalidf("parse transcript", "codex log, line %d: response item: %v", n, err)
	}
	switch it.Type {
	case "message":
		text := codexText(it.Content)
		switch it.Role {
		case "user":
			if environmentRE.MatchString(text) {
				b.drop(DropEnvironment)
				return nil
			}
			s, why := userText(text)
			if why != "" {
				b.drop(why)
				return nil
			}
			b.add(Event{Role: RoleUser, TS: ts, Content: bound(s, MaxMessageText, &b.t.Cut)})
		case "assistant":
			if s := strings.TrimSpace(text); s != "" {
				b.add(Event{Role: RoleAssistant, TS: ts, Content: bound(s, MaxMessageText, &b.t.Cut)})
			} else {
				b.drop(DropEmpty)
			}
		default: // developer, system
			b.drop(DropInstructions)
		}
	case "reasoning":
		b.drop(DropThinking)
	case "function_call", "custom_tool_call", "local_shell_call", "web_search_call":
		name := cmpOr(it.Name, strings.TrimSuffix(it.Type, "_call"))
		args := it.Args
		if len(args) == 0 {
			args = cmpRaw(it.Input, it.Action)
		}
		b.tools[it.CallID] = name
		b.add(Event{Role: RoleAssistant, TS: ts, ToolName: name, ToolArgs: bound(argsText(args), MaxToolOutput, &b.t.Cut)})
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		out, failed := codexOutput(it.Output)
		out = bound(out, MaxToolOutput, &b.t.Cut)
		e := Event{Role: RoleTool, TS: ts, ToolName: cmpOr(b.tools[it.CallID], "unknown")}
		if failed {
			e.Error = cmpOr(out, "the tool failed")
		} else {
			e.ToolResult = cmpOr(out, "(no output)")
		}
		b.add(e)
	default:
		b.drop(DropOther)
	}
	return nil
}

func cmpRaw(a, b json.RawMessage) json.RawMessage {
	if len(a) > 0 {
		return a
	}
	return b
}

// codexText joins a message's input_text and output_text parts.
func codexText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var out []string
	for _, p := range parts {
		switch {
		case p.Text != "":
			out = append(out, p.Text)
		case strings.Contains(p.Type, "image"):
			out = append(out, "[image]")
		}
	}
	return strings.Join(out, "\n")
}

// codexOutput reads a tool output and whether it failed. Codex has written
// it as {"output", "metadata": {"exit_code"}} JSON inside a string, as
// "Exit code: N\nWall time: …\nOutput:\n…" text, and as plain text.
func codexOutput(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		var obj struct {
			Content string `json:"content"`
			Success *bool  `json:"success"`
		}
		if json.Unmarshal(raw, &obj) == nil && obj.Content != "" {
			return obj.Content, obj.Success != nil && !*obj.Success
		}
		return verbatim(raw), false
	}
	var wrapped struct {
		Output   *string `json:"output"`
		Metadata struct {
			ExitCode *int `json:"exit_code"`
		} `json:"metadata"`
	}
	if strings.HasPrefix(strings.TrimSpace(s), "{") && json.Unmarshal([]byte(s), &wrapped) == nil && wrapped.Output != nil {
		code := 0
		if wrapped.Metadata.ExitCode != nil {
			code = *wrapped.Metadata.ExitCode
		}
		out := *wrapped.Output
		if code != 0 {
			out = "exit code " + strconv.Itoa(code) + "\n" + out
		}
		return out, code != 0
	}
	if m := codexExitRE.FindStringSubmatch(s); m != nil {
		return s, m[1] != "0"
	}
	return s, codexFailureRE.MatchString(strings.ToLower(strings.TrimSpace(s)))
}
