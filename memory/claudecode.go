package memory

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// ParseClaudeCode reads a Claude Code session log, and the logs of its
// subagents (from the subagents/ folder beside it) when given.
//
// User and assistant text become user and assistant events; a tool_use
// becomes a call with its name, input and ID, and the tool_result that
// answers it (Claude Code writes it as a "user" record) a result, or an
// error when is_error is set, carrying the call's ID, so that parallel
// calls of one tool are told apart. A background task's completion notice
// (<task-notification>) and its output read later are results of the call
// that started it. Whatever the harness wrote (thinking, progress,
// snapshots, queue operations, system records, attachments, hook output,
// meta text, built-in slash commands, system reminders, session state,
// API errors) is left out and counted; a compaction summary and an
// interruption are context (system events), never something the user
// said. Sidechain and subagent records are kept, marked "[subagent]",
// with their prompts as the agent's words, not the user's.
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
	Type              string `json:"type"`
	Subtype           string `json:"subtype"`
	SessionID         string `json:"sessionId"`
	CWD               string `json:"cwd"`
	Timestamp         string `json:"timestamp"`
	IsSidechain       bool   `json:"isSidechain"`
	IsMeta            bool   `json:"isMeta"`
	IsCompactSummary  bool   `json:"isCompactSummary"`
	IsAPIErrorMessage bool   `json:"isApiErrorMessage"`
	AgentID           string `json:"agentId"`
	// Origin says who wrote a user record: a person ("human") or the
	// harness ("task-notification", ...); PromptSource "system" likewise.
	Origin struct {
		Kind string `json:"kind"`
	} `json:"origin"`
	PromptSource string `json:"promptSource"`
	// ToolUseResult is the harness's structured view of a tool result: it
	// names the background task a call started.
	ToolUseResult json.RawMessage `json:"toolUseResult"`
	Message       struct {
		Role    string          `json:"role"`
		Model   string          `json:"model"`
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

// claudeSystem are the reasons system records are left out, by subtype.
var claudeSystem = map[string]string{
	"stop_hook_summary": DropHook,
	"local_command":     DropCommand,
	"compact_boundary":  DropCompaction,
	"api_error":         DropAPIError,
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
		case "file-history-snapshot", "file-history-delta":
			b.drop(DropSnapshot)
			return nil
		case "queue-operation":
			b.drop(DropQueue)
			return nil
		case "system":
			b.drop(cmpOr(claudeSystem[r.Subtype], DropSystemRecord))
			return nil
		case "summary", "ai-title", "custom-title":
			b.drop(DropSummaryRecord)
			return nil
		case "attachment":
			b.drop(claudeAttachment(line))
			return nil
		case "last-prompt", "mode", "permission-mode", "bridge-session", "tag", "agent-name":
			b.drop(DropSessionState)
			return nil
		default:
			b.drop(DropOther)
			return nil
		}
		ts := b.ts(r.Timestamp)
		side := subagent || r.IsSidechain
		switch {
		case r.IsMeta:
			b.drop(DropMeta)
			return nil
		case r.IsAPIErrorMessage:
			b.drop(DropAPIError)
			return nil
		case r.Type == "assistant" && r.Message.Model == "<synthetic>":
			b.drop(DropSynthetic)
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
		if r.Type == "user" && (r.Origin.Kind != "" && r.Origin.Kind != "human" || r.PromptSource == "system") {
			// The harness wrote this prompt: a background task's notice is
			// a result of the call that started it; anything else the
			// harness sends is not the person's words.
			for _, bl := range blocks {
				if bl.Type == "text" && taskNoticeRE.MatchString(bl.Text) {
					b.taskNotification(bl.Text, ts, side)
				} else if bl.Type != "tool_result" {
					b.drop(DropHarnessPrompt)
				} else {
					b.claudeBlock(r, bl, ts, side)
				}
			}
			return nil
		}
		for _, bl := range blocks {
			b.claudeBlock(r, bl, ts, side)
		}
		return nil
	})
}

// claudeAttachment says why an attachment record is left out: hook
// output, a queued prompt, or the harness's listings and reminders.
func claudeAttachment(line []byte) string {
	var a struct {
		Attachment struct {
			Type string `json:"type"`
		} `json:"attachment"`
	}
	_ = json.Unmarshal(line, &a)
	switch t := a.Attachment.Type; {
	case strings.HasPrefix(t, "hook"):
		return DropHook
	case t == "queued_command":
		return DropQueue
	}
	return DropAttachment
}

func (b *logBuilder) claudeBlock(r claudeRecord, bl claudeBlock, ts time.Time, side bool) {
	switch bl.Type {
	case "thinking", "redacted_thinking":
		b.drop(DropThinking)
	case "text":
		if r.IsCompactSummary {
			b.compactionSummary(ts, bl.Text)
			return
		}
		if r.Type == "assistant" {
			s := strings.TrimSpace(toolText(bl.Text, b.t.Dropped))
			if s == "" {
				b.drop(DropEmpty)
				return
			}
			b.add(Event{Role: RoleAssistant, TS: ts, Content: mark(side, bound(s, MaxMessageText, &b.t.Cut))})
			return
		}
		if taskNoticeRE.MatchString(bl.Text) {
			b.taskNotification(bl.Text, ts, side)
			return
		}
		s, why := userText(bl.Text, b.t.Dropped)
		switch why {
		case "":
		case MapInterruption:
			b.mapped(MapInterruption)
			b.add(Event{Role: RoleSystem, TS: ts, Content: "The user interrupted the assistant."})
			return
		case MapCompaction:
			b.compactionSummary(ts, s)
			return
		default:
			b.drop(why)
			return
		}
		if side {
			// A subagent's "user" is the agent that delegated to it.
			b.add(Event{Role: RoleAssistant, TS: ts, Content: "[subagent] task: " + bound(s, MaxMessageText, &b.t.Cut)})
			return
		}
		b.add(Event{Role: RoleUser, TS: ts, Content: bound(s, MaxMessageText, &b.t.Cut)})
	case "tool_use", "server_tool_use":
		if started := b.pollOf(bl.Input); started != "" {
			// A call that reads or stops a background task: its output is
			// the task's, the call itself is the harness's plumbing.
			b.polls[bl.ID] = started
			b.drop(DropBackground)
			return
		}
		b.tools[bl.ID] = bl.Name
		e := Event{Role: RoleAssistant, TS: ts, CallID: bl.ID, ToolName: bl.Name, ToolArgs: bound(verbatim(bl.Input), MaxToolOutput, &b.t.Cut)}
		if side {
			e.Content = "[subagent]"
		}
		b.add(e)
	case "tool_result", "web_search_tool_result":
		out := toolText(blockText(bl.Content), b.t.Dropped)
		if started, ok := b.polls[bl.ToolUseID]; ok {
			b.mapped(MapBackgroundOutput)
			b.result(started, ts, bound(out, MaxToolOutput, &b.t.Cut), bl.IsError || backgroundFailed(out), side)
			return
		}
		if task := backgroundTask(r.ToolUseResult, out); task != "" && !bl.IsError {
			// The call started a task that runs on; its result comes later,
			// in a notice or a poll.
			b.background[task] = bl.ToolUseID
			b.drop(DropBackground)
			return
		}
		if m := toolUseErrorRE.FindStringSubmatch(out); m != nil {
			// The harness refused the call: it never ran.
			if cancelledRE.MatchString(m[1]) {
				b.cancelled[bl.ToolUseID] = true
				b.drop(DropCancelled)
				return
			}
			b.mapped(MapRefused)
			e := Event{Role: RoleTool, TS: ts, CallID: bl.ToolUseID, ToolName: cmpOr(b.tools[bl.ToolUseID], "unknown"),
				Content: RefusedByHarness, Error: bound(strings.TrimSpace(m[1]), MaxToolOutput, &b.t.Cut)}
			b.add(e)
			return
		}
		b.result(bl.ToolUseID, ts, bound(out, MaxToolOutput, &b.t.Cut), bl.IsError, side)
	case "image", "document":
		b.add(Event{Role: Role(cmpOr(r.Message.Role, r.Type)), TS: ts, Content: "[" + bl.Type + "]"})
	default:
		b.drop(DropOther)
	}
}

// toolUseErrorRE is Claude Code's refusal of a call before it ran;
// cancelledRE the refusal of a parallel call whose sibling failed.
var (
	toolUseErrorRE = regexp.MustCompile(`(?s)^\s*<tool_use_error>(.*?)(?:</tool_use_error>\s*)?$`)
	cancelledRE    = regexp.MustCompile(`(?i)^\s*sibling tool call errored`)
)

// backgroundStartRE is the notice of a call that went on in the
// background, when the record has no structured result to say so.
var backgroundStartRE = regexp.MustCompile(`^(?:Command running in background with ID|Async agent launched successfully)[^\n]*?(?:ID|agentId):\s*([\w-]+)`)

// backgroundTask is the ID of the background task a tool result says its
// call started, or "".
func backgroundTask(structured json.RawMessage, out string) string {
	var r struct {
		BackgroundTaskID string `json:"backgroundTaskId"`
		AgentID          string `json:"agentId"`
		IsAsync          bool   `json:"isAsync"`
		Status           string `json:"status"`
	}
	if json.Unmarshal(structured, &r) == nil {
		switch {
		case r.BackgroundTaskID != "":
			return r.BackgroundTaskID
		case r.AgentID != "" && (r.IsAsync || strings.Contains(r.Status, "launch")):
			return r.AgentID
		}
	}
	if m := backgroundStartRE.FindStringSubmatch(strings.TrimSpace(out)); m != nil {
		return m[1]
	}
	return ""
}

// pollOf is the call that started the background task a call's input
// names (bash_id, shell_id, task_id, agent_id), or "".
func (b *logBuilder) pollOf(input json.RawMessage) string {
	if len(b.background) == 0 {
		return ""
	}
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	for k, v := range in {
		s, ok := v.(string)
		if !ok || !strings.HasSuffix(strings.ToLower(k), "id") {
			continue
		}
		if started, ok := b.background[s]; ok {
			return started
		}
	}
	return ""
}

var (
	exitCodeNoteRE = regexp.MustCompile(`(?i)\bexit(?:ed with)? code:?\s*(-?\d+)`)
	statusRE       = regexp.MustCompile(`(?s)<status>\s*(\w+)\s*</status>`)
)

// backgroundFailed reports whether a background task's output or notice
// says it failed: a failed or killed status, or a non-zero exit code.
func backgroundFailed(s string) bool {
	if m := statusRE.FindStringSubmatch(s); m != nil {
		switch strings.ToLower(m[1]) {
		case "failed", "error", "killed":
			return true
		}
	}
	if m := exitCodeNoteRE.FindStringSubmatch(s); m != nil && m[1] != "0" {
		return true
	}
	return false
}

// taskNotification adds a background task's completion notice as the
// result of the call that started it: its summary and result, an error
// when it failed. A notice whose call is unknown is still kept, as a
// result of its own.
func (b *logBuilder) taskNotification(s string, ts time.Time, side bool) {
	b.mapped(MapTaskNotification)
	call := tagText(s, "tool-use-id")
	if _, known := b.tools[call]; !known {
		call = b.background[tagText(s, "task-id")]
	}
	out := strings.TrimSpace(strings.Join(nonEmpty(tagText(s, "summary"), tagText(s, "result")), "\n"))
	if out == "" {
		out = "the background task ended (" + cmpOr(tagText(s, "status"), "no status") + ")"
	}
	if call == "" {
		call = "task-" + tagText(s, "task-id")
		b.tools[call] = "background-task"
	}
	b.result(call, ts, bound(toolText(out, b.t.Dropped), MaxToolOutput, &b.t.Cut), backgroundFailed(s), side)
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
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
