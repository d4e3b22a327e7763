package memory

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
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

// Reasons a record of an agent's log, or a part of one, is left out of the
// transcript; the counts are in Transcript.Dropped. What the agent's
// harness writes is never taken for the person's words: each kind it
// writes has a reason here, or is kept in another form (see the Mapped
// kinds below).
const (
	DropThinking      = "thinking"              // the model's private reasoning
	DropProgress      = "progress"              // hook and subagent progress records
	DropSnapshot      = "file-history-snapshot" // Claude Code's file backups
	DropQueue         = "queue-operation"       // prompts queued while busy
	DropSystemRecord  = "system-record"         // turn durations, away recaps, notices
	DropMeta          = "meta"                  // caveats and expanded command or skill text the user did not type
	DropCommand       = "local-command"         // built-in /commands, their output, shell escapes
	DropReminder      = "system-reminder"       // text the harness adds to a message or a result
	DropEnvironment   = "environment-context"   // Codex's environment and instruction preamble
	DropInstructions  = "instructions"          // developer or system prompts
	DropTurnContext   = "turn-context"          // Codex's per-turn settings
	DropEventMsg      = "event-message"         // Codex's UI events, which repeat the response items
	DropEmpty         = "empty"                 // records with nothing left to say
	DropSummaryRecord = "summary"               // session titles (summary, ai-title, custom-title)
	DropSessionState  = "session-state"         // the harness's bookkeeping: last prompt, mode, permission mode, bridge
	DropAttachment    = "attachment"            // tool, skill and agent listings, diagnostics, todo reminders
	DropHook          = "hook-output"           // what hooks printed or injected, hook summaries
	DropCompaction    = "compact-boundary"      // the marker where a conversation was compacted
	DropAPIError      = "api-error"             // the harness's report of a failed model call
	DropSynthetic     = "synthetic"             // text the harness wrote in the model's place
	DropHarnessPrompt = "harness-prompt"        // prompts the harness sent as the user (not typed by a person)
	DropPastedUI      = "pasted-agent-output"   // an agent's terminal output pasted into a message
	DropIDEContext    = "ide-context"           // the file or selection an IDE attached to a message
	DropBackground    = "background-status"     // a background task's start notice, and calls that poll or stop it
	DropCancelled     = "cancelled-call"        // calls the harness cancelled unrun because a parallel call failed
	DropLogCut        = "log-cut"               // a log over the reader's cap, read as its head and tail
	DropOther         = "other"                 // record types this parser does not know
)

// Kinds of harness records kept in another form; the counts are in
// Transcript.Mapped.
const (
	// A background task's completion notice, or its output read later, is
	// a result of the call that started the task.
	MapTaskNotification = "task-notification"
	MapBackgroundOutput = "background-output"
	// A compaction summary is context, not something the user said.
	MapCompaction = "compaction-summary"
	// "[Request interrupted by user]" says the person stopped the agent.
	MapInterruption = "interruption"
	// A call the harness refused to run (a file not read before an edit,
	// a malformed input) is kept as its result, marked RefusedByHarness:
	// nothing ran, so it teaches nothing about the work.
	MapRefused = "refused-call"
)

// RefusedByHarness is the content of the result of a call the agent's
// harness refused to run.
const RefusedByHarness = "[refused by the harness, not run]"

// A line of a JSON-lines log is one record; a log whose lines are not is
// not an agent's log.
type logProbe struct {
	Type      string          `json:"type"`
	SessionID string          `json:"sessionId"`
	Payload   json.RawMessage `json:"payload"`
	Message   json.RawMessage `json:"message"`
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Role      string          `json:"role"`
}

// probeLines is how many of a log's first records isJSONLog reads to tell
// its format: a log may open with records of any type (Claude Code 2.1
// opens with last-prompt, mode and permission-mode records).
const probeLines = 64

// isJSONLog reports whether data is a JSON-lines log of a coding agent,
// and which format it is. It reads the records, not the first line alone:
// every line read must be a JSON object, and the first record whose type
// names one agent's conversation decides.
func isJSONLog(data []byte) (string, bool) {
	rest := data
	objects := 0
	for n := 0; n < probeLines && len(rest) > 0; n++ {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' {
			return "", false
		}
		var p logProbe
		if json.Unmarshal(line, &p) != nil {
			return "", false
		}
		objects++
		switch p.Type {
		case "session_meta", "response_item", "turn_context", "event_msg", "compacted":
			if len(p.Payload) > 0 {
				return FormatCodex, true
			}
		case "user", "assistant":
			if len(p.Message) > 0 {
				return FormatClaudeCode, true
			}
		case "":
			// Codex rollouts before mid-2025: a bare header, then bare items.
			if n == 0 && p.ID != "" && p.Timestamp != "" && len(p.Message) == 0 && len(rest) > 0 && bytes.Contains(rest, []byte(`"type"`)) {
				return FormatCodex, true
			}
			if p.Role != "" {
				return "", false // an OpenAI message per line: not an agent's log
			}
		}
	}
	// Only bookkeeping records so far: a Claude Code log by its record
	// types (it is refused later as holding no conversation, saying so).
	if objects > 1 || (objects == 1 && len(bytes.TrimSpace(rest)) == 0) {
		line, _, _ := bytes.Cut(data, []byte("\n"))
		var p logProbe
		if json.Unmarshal(bytes.TrimSpace(line), &p) == nil && p.Type != "" && (p.SessionID != "" || claudeBookkeeping[p.Type]) {
			return FormatClaudeCode, true
		}
	}
	return "", false
}

// claudeBookkeeping are Claude Code record types that carry no
// conversation; a log may open with any of them.
var claudeBookkeeping = map[string]bool{
	"progress": true, "file-history-snapshot": true, "file-history-delta": true, "queue-operation": true,
	"system": true, "summary": true, "ai-title": true, "custom-title": true, "last-prompt": true, "mode": true,
	"permission-mode": true, "bridge-session": true, "attachment": true, "tag": true, "agent-name": true,
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
	// background maps the ID of a background task (a shell or an agent
	// the harness runs on) to the call that started it; polls maps the
	// ID of a call that reads or stops such a task to the starting call.
	background map[string]string
	polls      map[string]string
	userTexts  map[string]bool // what user messages said, as written
	cancelled  map[string]bool // calls the harness cancelled unrun
}

func newLogBuilder(format string, loc *time.Location) *logBuilder {
	return &logBuilder{t: Transcript{Format: format, Dropped: map[string]int{}, Mapped: map[string]int{}}, loc: loc,
		tools: map[string]string{}, background: map[string]string{}, polls: map[string]string{}, userTexts: map[string]bool{}, cancelled: map[string]bool{}}
}

func (b *logBuilder) drop(reason string) { b.t.Dropped[reason]++ }

func (b *logBuilder) mapped(kind string) { b.t.Mapped[kind]++ }

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

// result adds the result of call id: an error when failed, else its
// output.
func (b *logBuilder) result(id string, ts time.Time, out string, failed bool, side bool) {
	e := Event{Role: RoleTool, TS: ts, CallID: id, ToolName: cmpOr(b.tools[id], "unknown")}
	if failed {
		e.Error = cmpOr(out, "the tool failed")
	} else {
		e.ToolResult = cmpOr(out, "(no output)")
	}
	if side {
		e.Content = "[subagent]"
	}
	b.add(e)
}

// compactionSummary adds a compaction's summary as context.
func (b *logBuilder) compactionSummary(ts time.Time, text string) {
	b.mapped(MapCompaction)
	b.add(Event{Role: RoleSystem, TS: ts, Content: "Summary of the conversation before it was compacted (context, not the user's words):\n" + bound(strings.TrimSpace(text), MaxMessageText, &b.t.Cut)})
}

func (b *logBuilder) finish(data []byte) (Transcript, error) {
	if len(b.cancelled) > 0 {
		b.t.Events = slices.DeleteFunc(b.t.Events, func(e Event) bool { return e.CallID != "" && b.cancelled[e.CallID] })
	}
	t := b.t
	if len(t.Dropped) == 0 {
		t.Dropped = nil
	}
	if len(t.Mapped) == 0 {
		t.Mapped = nil
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

// DroppedSummary says what an agent's log left out, and what of the
// harness's it kept in another form, for people: "44 progress, 3
// thinking; kept as context or results: 2 task-notification".
func (t Transcript) DroppedSummary() string {
	s := droppedSummary(t.Dropped)
	if len(t.Mapped) > 0 {
		s += "; kept as context or results: " + droppedSummary(t.Mapped)
	}
	return s
}

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

func cmpRaw(a, b json.RawMessage) json.RawMessage {
	if len(a) > 0 {
		return a
	}
	return b
}
