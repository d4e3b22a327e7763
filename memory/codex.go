package memory

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ParseCodex reads a Codex CLI rollout log.
//
// User and assistant messages become events; function_call and
// custom_tool_call become calls and their outputs results, linked by
// call_id (carried as the events' CallID), with a non-zero exit code read
// as a failure. A command that runs on in a terminal session ("Process
// running with session ID N") gets its later output, read by write_stdin,
// as its own result. The session's ID and project (the repository's remote
// when Codex read one, else the directory) come from session_meta,
// and a compaction is context (a system event). Reasoning, turn contexts,
// UI events (event_msg, which repeat the response items), and the
// environment and instruction preamble are left out and counted.
func ParseCodex(data []byte, loc *time.Location) (Transcript, error) {
	b := newLogBuilder(FormatCodex, loc)
	b.t.Agent = "codex"
	// Codex repeats each user message as a UI event; the Desktop app
	// writes some only there. Those kept only as UI events are the user's
	// words too.
	type uiMessage struct {
		ts   time.Time
		text string
	}
	var uiUser []uiMessage
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
				Git struct {
					RepositoryURL string `json:"repository_url"`
				} `json:"git"`
			}
			_ = json.Unmarshal(r.Payload, &m)
			if b.t.SessionID == "" {
				b.t.SessionID = m.ID
			}
			// The repository's remote, when Codex read one, is the
			// project; else the directory.
			if id := RemoteProjectID(m.Git.RepositoryURL); id != "" && (b.t.Project == "" || isDirectory(b.t.Project)) {
				b.t.Project = id
			} else if b.t.Project == "" {
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
			var m struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			}
			if json.Unmarshal(r.Payload, &m) == nil && m.Type == "user_message" && strings.TrimSpace(m.Message) != "" {
				uiUser = append(uiUser, uiMessage{ts, m.Message})
				return nil
			}
			b.drop(DropEventMsg)
			return nil
		case r.Type == "compacted":
			var m struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(r.Payload, &m) == nil && strings.TrimSpace(m.Message) != "" {
				b.compactionSummary(ts, m.Message)
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
	for _, m := range uiUser {
		if b.userTexts[strings.TrimSpace(m.text)] {
			b.drop(DropEventMsg)
			continue
		}
		b.codexUser(m.text, m.ts)
	}
	return b.finish(data)
}

// codexUser adds what a user message says, without the harness's
// additions.
func (b *logBuilder) codexUser(text string, ts time.Time) {
	if environmentRE.MatchString(text) {
		b.drop(DropEnvironment)
		return
	}
	if loc := codexAttachedRE.FindStringIndex(text); loc != nil {
		// The Desktop app lists the files the user attached before the
		// request.
		b.drop(DropIDEContext)
		text = text[loc[1]:]
	}
	s, why := userText(text, b.t.Dropped)
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
	b.add(Event{Role: RoleUser, TS: ts, Content: bound(s, MaxMessageText, &b.t.Cut)})
}

// codexAttachedRE is the Desktop app's header of attached files.
var codexAttachedRE = regexp.MustCompile(`(?s)^\s*# Files mentioned by the user:.*?## My request for Codex:\s*`)

// codexStillRunningRE is how Codex says a command goes on in a terminal
// session, to be read with write_stdin.
var codexStillRunningRE = regexp.MustCompile(`(?m)^Process running with session ID (\d+)`)

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
			b.userTexts[strings.TrimSpace(text)] = true
			b.codexUser(text, ts)
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
		text := argsText(args)
		if session := codexSessionOf(text); session != "" {
			if started, ok := b.background[session]; ok {
				// write_stdin to a command that runs on: what it reads is
				// that command's output.
				b.polls[it.CallID] = started
				b.drop(DropBackground)
				return nil
			}
		}
		b.tools[it.CallID] = name
		b.add(Event{Role: RoleAssistant, TS: ts, CallID: it.CallID, ToolName: name, ToolArgs: bound(text, MaxToolOutput, &b.t.Cut)})
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		out, failed := codexOutput(it.Output)
		id := it.CallID
		if started, ok := b.polls[id]; ok {
			id = started
			b.mapped(MapBackgroundOutput)
		}
		if m := codexStillRunningRE.FindStringSubmatch(out); m != nil {
			// The command runs on; its output so far, if any, is kept
			// when it is read, with the rest.
			b.background[m[1]] = id
			if strings.TrimSpace(codexOutputBody(out)) == "" {
				b.drop(DropBackground)
				return nil
			}
		}
		b.result(id, ts, bound(out, MaxToolOutput, &b.t.Cut), failed, false)
	default:
		b.drop(DropOther)
	}
	return nil
}

// codexSessionOf is the terminal session a call's arguments write to
// (write_stdin's session_id), or "".
func codexSessionOf(args string) string {
	var in struct {
		SessionID json.RawMessage `json:"session_id"`
	}
	if json.Unmarshal([]byte(args), &in) != nil || len(in.SessionID) == 0 {
		return ""
	}
	s, err := rawString(in.SessionID)
	if err != nil {
		return ""
	}
	return s
}

// codexOutputBody is what follows "Output:" in a terminal session's
// report.
func codexOutputBody(s string) string {
	if _, body, ok := strings.Cut(s, "\nOutput:\n"); ok {
		return body
	}
	return s
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

var (
	codexExitRE    = regexp.MustCompile(`(?m)^(?:Exit code|Process exited with code):?\s*(-?\d+)`)
	codexFailureRE = regexp.MustCompile(`^(?:error|failed|execution error|aborted|\w+ failed:)`)
)

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
