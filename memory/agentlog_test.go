package memory

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// ev is the part of an event a record-type case checks.
type ev struct {
	Role                                       Role
	Content, Tool, Args, Result, Failure, Call string
}

func eventsOf(es []Event) []ev {
	out := make([]ev, len(es))
	for i, e := range es {
		out[i] = ev{e.Role, e.Content, e.ToolName, e.ToolArgs, e.ToolResult, e.Error, e.CallID}
	}
	return out
}

const ccHead = `"sessionId":"s-1","cwd":"/home/dana/projects/billing","timestamp":"2026-03-02T09:00:0`

func ccLine(n int, rest string) string {
	return `{` + ccHead + string(rune('0'+n)) + `Z",` + rest + `}`
}

// ccText is a user record whose content is text (JSON-quoted here).
func ccText(n int, text string, extra ...string) string {
	fields := append([]string{`"type":"user"`}, extra...)
	return ccLine(n, strings.Join(fields, ",")+`,"message":{"role":"user","content":`+quote(text)+`}`)
}

// ccCall is an assistant record with tool calls; ccResult a user record
// with one tool result, and the harness's structured view of it.
func ccCall(n int, blocks ...string) string {
	return ccLine(n, `"type":"assistant","message":{"role":"assistant","content":[`+strings.Join(blocks, ",")+`]}`)
}

func ccUse(id, name, input string) string {
	return `{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":` + input + `}`
}

func ccResult(n int, id, content string, isError bool, structured string) string {
	extra := ""
	if structured != "" {
		extra = `"toolUseResult":` + structured + `,`
	}
	errField := ""
	if isError {
		errField = `,"is_error":true`
	}
	return ccLine(n, extra+`"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"`+id+`","content":`+quote(content)+errField+`}]}`)
}

// Every shape of record and text found in real Claude Code logs (the
// sessions under ../shared/bench/transcripts and testdata/claude-code):
// what the person wrote is a user event, what the harness wrote is left
// out and counted, or kept as context or as a result of the call it
// belongs to.
func TestClaudeCodeRecordTypes(t *testing.T) {
	cases := []struct {
		name    string
		lines   []string
		want    []ev
		dropped map[string]int
		mapped  map[string]int
	}{
		{"a user's string message", []string{ccLine(1, `"type":"user","message":{"role":"user","content":"deploy the billing service"}`)},
			[]ev{{Role: RoleUser, Content: "deploy the billing service"}}, nil, nil},
		{"a user's text block, its system reminder removed", []string{ccLine(1, `"type":"user","message":{"role":"user","content":[{"type":"text","text":"use UTC in reports<system-reminder>the todo list is empty</system-reminder>"}]}`)},
			[]ev{{Role: RoleUser, Content: "use UTC in reports"}}, map[string]int{DropReminder: 1}, nil},
		{"assistant text, thinking left out", []string{ccLine(1, `"type":"assistant","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"Checking the logs."}]}`)},
			[]ev{{Role: RoleAssistant, Content: "Checking the logs."}}, map[string]int{DropThinking: 1}, nil},
		{"a tool call and its result, linked by ID", []string{
			ccCall(1, ccUse("toolu_1", "Bash", `{"command":"make test"}`)),
			ccResult(2, "toolu_1", "ok  ./...", false, "")},
			[]ev{{Role: RoleAssistant, Tool: "Bash", Args: `{"command":"make test"}`, Call: "toolu_1"}, {Role: RoleTool, Tool: "Bash", Result: "ok  ./...", Call: "toolu_1"}}, nil, nil},
		{"a failed tool result is an error, and never the user's words", []string{
			ccCall(1, ccUse("toolu_2", "Read", `{"file_path":"/etc/x"}`)),
			ccLine(2, `"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","is_error":true,"content":[{"type":"text","text":"EACCES: permission denied"}]}]}`)},
			[]ev{{Role: RoleAssistant, Tool: "Read", Args: `{"file_path":"/etc/x"}`, Call: "toolu_2"}, {Role: RoleTool, Tool: "Read", Failure: "EACCES: permission denied", Call: "toolu_2"}}, nil, nil},
		{"parallel calls of one tool, answered out of order, the first failing", []string{
			ccCall(1, ccUse("toolu_a", "Bash", `{"command":"go test ./billing"}`), ccUse("toolu_b", "Bash", `{"command":"go test ./ledger"}`)),
			ccResult(2, "toolu_b", "ok  ledger", false, ""),
			ccResult(3, "toolu_a", "FAIL billing", true, "")},
			[]ev{{Role: RoleAssistant, Tool: "Bash", Args: `{"command":"go test ./billing"}`, Call: "toolu_a"}, {Role: RoleAssistant, Tool: "Bash", Args: `{"command":"go test ./ledger"}`, Call: "toolu_b"},
				{Role: RoleTool, Tool: "Bash", Result: "ok  ledger", Call: "toolu_b"}, {Role: RoleTool, Tool: "Bash", Failure: "FAIL billing", Call: "toolu_a"}}, nil, nil},
		{"calls the harness refused or cancelled never ran", []string{
			ccCall(1, ccUse("toolu_e", "Edit", `{"file_path":"next.svg","old_string":"a","new_string":"b"}`), ccUse("toolu_s", "Bash", `{"command":"npm test"}`)),
			ccResult(2, "toolu_e", "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>", true, ""),
			ccResult(3, "toolu_s", "<tool_use_error>Sibling tool call errored</tool_use_error>", true, "")},
			[]ev{{Role: RoleAssistant, Tool: "Edit", Args: `{"file_path":"next.svg","old_string":"a","new_string":"b"}`, Call: "toolu_e"},
				{Role: RoleTool, Tool: "Edit", Content: RefusedByHarness, Failure: "File has not been read yet. Read it first before writing to it.", Call: "toolu_e"}},
			map[string]int{DropCancelled: 1}, map[string]int{MapRefused: 1}},
		{"a tool result's system reminder is removed", []string{
			ccCall(1, ccUse("toolu_3", "Read", `{"file_path":"main.go"}`)),
			ccResult(2, "toolu_3", "package main\n<system-reminder>consider whether it is malware</system-reminder>", false, "")},
			[]ev{{Role: RoleAssistant, Tool: "Read", Args: `{"file_path":"main.go"}`, Call: "toolu_3"}, {Role: RoleTool, Tool: "Read", Result: "package main", Call: "toolu_3"}}, map[string]int{DropReminder: 1}, nil},
		{"records that are not conversation", []string{
			`{"type":"file-history-snapshot","messageId":"m","snapshot":{}}`,
			`{"type":"file-history-delta","messageId":"m","trackingPath":"a.md"}`,
			ccLine(1, `"type":"progress","data":{"type":"hook_progress","hookEvent":"SessionStart"}`),
			ccLine(2, `"type":"queue-operation","operation":"enqueue","content":"/mcp"`),
			ccLine(3, `"type":"system","subtype":"local_command","content":"<local-command-stdout>ok</local-command-stdout>"`),
			ccLine(3, `"type":"system","subtype":"stop_hook_summary","hookCount":2`),
			ccLine(3, `"type":"system","subtype":"turn_duration","durationMs":2000`),
			ccLine(3, `"type":"system","subtype":"away_summary","content":"Goal: ship the fix. Next action: yours."`),
			ccLine(3, `"type":"system","subtype":"compact_boundary","content":"Conversation compacted"`),
			ccLine(3, `"type":"system","subtype":"api_error","level":"error"`),
			`{"type":"summary","summary":"Billing deploy","leafUuid":"u"}`,
			`{"type":"ai-title","aiTitle":"Deploy billing","sessionId":"s-1"}`,
			ccLine(4, `"type":"user","message":{"role":"user","content":"what failed?"}`)},
			[]ev{{Role: RoleUser, Content: "what failed?"}},
			map[string]int{DropSnapshot: 2, DropProgress: 1, DropQueue: 1, DropCommand: 1, DropHook: 1, DropSystemRecord: 2, DropCompaction: 1, DropAPIError: 1, DropSummaryRecord: 2}, nil},
		{"a recent log opens with session state; attachments are the harness's", []string{
			`{"type":"last-prompt","leafUuid":"u","sessionId":"s-1"}`,
			`{"type":"mode","mode":"normal","sessionId":"s-1"}`,
			`{"type":"permission-mode","permissionMode":"auto","sessionId":"s-1"}`,
			`{"type":"bridge-session","sessionId":"s-1","bridgeSessionId":"cse_1"}`,
			ccLine(1, `"type":"attachment","attachment":{"type":"hook_success","hookEvent":"SessionStart","stdout":"{\"hookSpecificOutput\":{}}"}`),
			ccLine(1, `"type":"attachment","attachment":{"type":"hook_additional_context","content":["You have superpowers."]}`),
			ccLine(1, `"type":"attachment","attachment":{"type":"deferred_tools_delta","addedNames":["WebFetch"]}`),
			ccLine(1, `"type":"attachment","attachment":{"type":"skill_listing","content":"- humanizer"}`),
			ccLine(1, `"type":"attachment","attachment":{"type":"queued_command","prompt":"<task-notification>…</task-notification>","commandMode":"task-notification"}`),
			ccText(2, "make me a skill for the graph tool", `"origin":{"kind":"human"}`, `"promptSource":"typed"`)},
			[]ev{{Role: RoleUser, Content: "make me a skill for the graph tool"}},
			map[string]int{DropSessionState: 4, DropHook: 2, DropAttachment: 2, DropQueue: 1}, nil},
		{"meta text, built-in commands, command output and shell escapes", []string{
			ccText(1, "<local-command-caveat>Caveat: generated by local commands</local-command-caveat>", `"isMeta":true`),
			ccText(2, "<command-name>/mcp</command-name>\n<command-message>mcp</command-message>\n<command-args></command-args>"),
			ccText(3, "<local-command-stdout>Reconnected.</local-command-stdout>"),
			ccText(4, "<command-name>/compact</command-name>\n<command-message>compact</command-message>\n<command-args>keep the deploy details and the UTC rule</command-args>"),
			ccText(5, "<command-name>/model</command-name>\n<command-args>opus</command-args>"),
			ccText(6, "<bash-input>git status</bash-input>"),
			ccText(7, "<bash-stdout>On branch main</bash-stdout><bash-stderr></bash-stderr>"),
			ccText(8, "Create beads with a structured preview before execution.", `"isMeta":true`)},
			nil, map[string]int{DropMeta: 2, DropCommand: 6}, nil},
		{"a command that carries a request: its arguments are the person's words", []string{
			ccText(1, "<command-name>/review</command-name>\n<command-args>check the migrations too</command-args>"),
			ccText(2, "<command-message>orchestrator</command-message>\n<command-name>/orchestrator</command-name>\n<command-args>create a TODO app with Next.js</command-args>"),
			ccText(3, "<command-message>beads:create</command-message>\n<command-name>/beads:create</command-name>\n<command-args>set up credo and dialyzer</command-args>")},
			[]ev{{Role: RoleUser, Content: "check the migrations too"}, {Role: RoleUser, Content: "create a TODO app with Next.js"}, {Role: RoleUser, Content: "set up credo and dialyzer"}}, nil, nil},
		{"an interruption is context, not a statement", []string{
			ccLine(1, `"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user for tool use]"}]}`),
			ccText(2, "[Request interrupted by user]")},
			[]ev{{Role: RoleSystem, Content: "The user interrupted the assistant."}, {Role: RoleSystem, Content: "The user interrupted the assistant."}}, nil, map[string]int{MapInterruption: 2}},
		{"a compaction summary is context, flagged or not", []string{
			ccLine(1, `"type":"user","isCompactSummary":true,"message":{"role":"user","content":"The user wants invoices in EUR."}`),
			ccText(2, "This session is being continued from a previous conversation that ran out of context. The user wants invoices in EUR.")},
			[]ev{{Role: RoleSystem, Content: "Summary of the conversation before it was compacted (context, not the user's words):\nThe user wants invoices in EUR."},
				{Role: RoleSystem, Content: "Summary of the conversation before it was compacted (context, not the user's words):\nThis session is being continued from a previous conversation that ran out of context. The user wants invoices in EUR."}},
			nil, map[string]int{MapCompaction: 2}},
		{"a background task's notice is the result of the call that started it", []string{
			ccCall(1, ccUse("toolu_bg", "Bash", `{"command":"make check","run_in_background":true}`)),
			ccResult(2, "toolu_bg", "Command running in background with ID: bx1. Output is being written to: /tmp/tasks/bx1.output.", false, `{"stdout":"","backgroundTaskId":"bx1"}`),
			ccText(3, "<task-notification>\n<task-id>bx1</task-id>\n<tool-use-id>toolu_bg</tool-use-id>\n<output-file>/tmp/tasks/bx1.output</output-file>\n<status>completed</status>\n<summary>Background command \"make check\" completed (exit code 2)</summary>\n</task-notification>",
				`"origin":{"kind":"task-notification"}`, `"promptSource":"system"`)},
			[]ev{{Role: RoleAssistant, Tool: "Bash", Args: `{"command":"make check","run_in_background":true}`, Call: "toolu_bg"},
				{Role: RoleTool, Tool: "Bash", Failure: `Background command "make check" completed (exit code 2)`, Call: "toolu_bg"}},
			map[string]int{DropBackground: 1}, map[string]int{MapTaskNotification: 1}},
		{"an agent's notice, its call ID redacted, found by its task ID; an older log's notice without origin", []string{
			ccCall(1, ccUse("toolu_ag", "Agent", `{"description":"Map the tool","prompt":"Explore the repository"}`)),
			ccResult(2, "toolu_ag", "Async agent launched successfully.\nagentId: a42 (internal ID)", false, `{"isAsync":true,"status":"async_launched","agentId":"a42"}`),
			ccText(3, "<task-notification>\n<task-id>a42</task-id>\n<tool-use-id>REDACTED</tool-use-id>\n<status>completed</status>\n<summary>Agent \"Map the tool\" finished</summary>\n<result>The tool parses with tree-sitter.</result>\n</task-notification>",
				`"origin":{"kind":"task-notification"}`),
			ccText(4, "<task-notification>\n<task-id>b7</task-id>\n<status>failed</status>\n<summary>Background command \"deploy\" failed</summary>\n</task-notification>")},
			[]ev{{Role: RoleAssistant, Tool: "Agent", Args: `{"description":"Map the tool","prompt":"Explore the repository"}`, Call: "toolu_ag"},
				{Role: RoleTool, Tool: "Agent", Result: "Agent \"Map the tool\" finished\nThe tool parses with tree-sitter.", Call: "toolu_ag"},
				{Role: RoleTool, Tool: "background-task", Failure: `Background command "deploy" failed`, Call: "task-b7"}},
			map[string]int{DropBackground: 1}, map[string]int{MapTaskNotification: 2}},
		{"a background shell's output, read by polling it, is its call's result", []string{
			ccCall(1, ccUse("toolu_dev", "Bash", `{"command":"pnpm dev --port 3001","run_in_background":true}`)),
			ccResult(2, "toolu_dev", "Command running in background with ID: bash_1", false, `{"stdout":"","backgroundTaskId":"bash_1"}`),
			ccCall(3, ccUse("toolu_poll", "BashOutput", `{"bash_id":"bash_1"}`)),
			ccResult(4, "toolu_poll", "<status>running</status>\n\n<stdout>\n ready on :3001\n</stdout>", false, `{"shellId":"bash_1","status":"running"}`),
			ccCall(5, ccUse("toolu_kill", "KillShell", `{"shell_id":"bash_1"}`))},
			[]ev{{Role: RoleAssistant, Tool: "Bash", Args: `{"command":"pnpm dev --port 3001","run_in_background":true}`, Call: "toolu_dev"},
				{Role: RoleTool, Tool: "Bash", Result: "<status>running</status>\n\n<stdout>\n ready on :3001\n</stdout>", Call: "toolu_dev"}},
			map[string]int{DropBackground: 3}, map[string]int{MapBackgroundOutput: 1}},
		{"prompts the harness sends as the user are not the person's", []string{
			ccText(1, "Continue from where you left off.", `"origin":{"kind":"auto-continue"}`, `"promptSource":"system"`),
			ccText(2, "ok, go on")},
			[]ev{{Role: RoleUser, Content: "ok, go on"}}, map[string]int{DropHarnessPrompt: 1}, nil},
		{"API errors and synthetic replies are the harness's", []string{
			ccLine(1, `"type":"assistant","isApiErrorMessage":true,"message":{"role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"API Error: 529 overloaded"}]}`),
			ccLine(2, `"type":"assistant","message":{"role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"No response requested."}]}`),
			ccLine(3, `"type":"assistant","message":{"role":"assistant","model":"claude-sonnet-4","content":[{"type":"text","text":"Done."}]}`)},
			[]ev{{Role: RoleAssistant, Content: "Done."}}, map[string]int{DropAPIError: 1, DropSynthetic: 1}, nil},
		{"an agent's terminal output pasted into a message is cut from it", []string{
			ccText(1, "⏺ reviewer(Review the transcript changes)\n  ⎿  Done (9 tool uses · 111.2k tokens · 45s)\n\ndoes this add up then? 111.2k?")},
			[]ev{{Role: RoleUser, Content: "does this add up then? 111.2k?"}}, map[string]int{DropPastedUI: 1}, nil},
		{"words to the harness (a thinking budget, a subagent's mention) are cut from a prompt", []string{
			ccText(1, "Ultrathink there is logic that tracks the session files."),
			ccText(2, "@\"solution-architect (agent)\" analyze the CLI commands"),
			ccText(3, "keep it incremental. ultrathink.")},
			[]ev{{Role: RoleUser, Content: "there is logic that tracks the session files."}, {Role: RoleUser, Content: "analyze the CLI commands"}, {Role: RoleUser, Content: "keep it incremental."}}, nil, nil},
		{"hook and IDE additions to a prompt are cut from it", []string{
			ccText(1, "<ide_opened_file>The user opened main.go in the IDE.</ide_opened_file>\nfix the nil check here<user-prompt-submit-hook>Remember the style guide.</user-prompt-submit-hook>")},
			[]ev{{Role: RoleUser, Content: "fix the nil check here"}}, map[string]int{DropIDEContext: 1, DropHook: 1}, nil},
		{"sidechain records are the agent's, marked", []string{
			ccLine(1, `"type":"user","isSidechain":true,"message":{"role":"user","content":"List the failing tests"}`),
			ccLine(2, `"type":"assistant","isSidechain":true,"message":{"role":"assistant","content":[{"type":"text","text":"Two fail."}]}`)},
			[]ev{{Role: RoleAssistant, Content: "[subagent] task: List the failing tests"}, {Role: RoleAssistant, Content: "[subagent] Two fail."}}, nil, nil},
		{"an image is named", []string{ccLine(1, `"type":"user","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","data":"AAAA"}},{"type":"text","text":"this chart is wrong"}]}`)},
			[]ev{{Role: RoleUser, Content: "[image]"}, {Role: RoleUser, Content: "this chart is wrong"}}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := ParseTranscript([]byte(strings.Join(c.lines, "\n")), nil)
			if c.want == nil {
				if err == nil || !strings.Contains(err.Error(), "holds no conversation") {
					t.Fatalf("got %v, want the log refused as holding no conversation", err)
				}
				if !strings.Contains(err.Error(), droppedSummary(c.dropped)) {
					t.Errorf("the refusal %q does not count %s", err, droppedSummary(c.dropped))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tr.Format != FormatClaudeCode || tr.SessionID != "s-1" || tr.Project != "/home/dana/projects/billing" {
				t.Errorf("format %q, session %q, project %q", tr.Format, tr.SessionID, tr.Project)
			}
			if got := eventsOf(tr.Events); !slices.Equal(got, c.want) {
				t.Errorf("events\n got %+v\nwant %+v", got, c.want)
			}
			if !maps.Equal(tr.Dropped, c.dropped) {
				t.Errorf("dropped %v, want %v", tr.Dropped, c.dropped)
			}
			if !maps.Equal(tr.Mapped, c.mapped) {
				t.Errorf("mapped %v, want %v", tr.Mapped, c.mapped)
			}
			if err := tr.Normalize(DefaultTenant, time.Now()); err != nil {
				t.Errorf("normalize: %v", err)
			}
		})
	}
}

func TestCodexRecordTypes(t *testing.T) {
	meta := `{"timestamp":"2026-04-01T08:00:00Z","type":"session_meta","payload":{"id":"0199-abc","cwd":"/srv/shop","cli_version":"0.46.0","instructions":null}}`
	item := func(ts int, payload string) string {
		return `{"timestamp":"2026-04-01T08:00:0` + string(rune('0'+ts)) + `Z","type":"response_item","payload":` + payload + `}`
	}
	cases := []struct {
		name    string
		lines   []string
		want    []ev
		dropped map[string]int
	}{
		{"user and assistant messages; the preamble left out", []string{meta,
			item(1, `{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/srv/shop</cwd>\n</environment_context>"}]}`),
			item(1, `{"type":"message","role":"user","content":[{"type":"input_text","text":"# AGENTS.md instructions for /srv/shop\n..."}]}`),
			item(2, `{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>..."}]}`),
			item(3, `{"type":"message","role":"user","content":[{"type":"input_text","text":"prices are in cents"}]}`),
			item(4, `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Noted."}]}`)},
			[]ev{{Role: RoleUser, Content: "prices are in cents"}, {Role: RoleAssistant, Content: "Noted."}},
			map[string]int{DropEnvironment: 2, DropInstructions: 1}},
		{"a call and its output, exit code 0", []string{meta,
			item(1, `{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"go test ./...\"]}","call_id":"call_1"}`),
			item(2, `{"type":"function_call_output","call_id":"call_1","output":"{\"output\":\"ok\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":1.2}}"}`)},
			[]ev{{Role: RoleAssistant, Tool: "shell", Args: `{"command":["bash","-lc","go test ./..."]}`, Call: "call_1"}, {Role: RoleTool, Tool: "shell", Result: "ok\n", Call: "call_1"}}, nil},
		{"a non-zero exit code is a failure", []string{meta,
			item(1, `{"type":"function_call","name":"shell","arguments":"{\"command\":[\"make\"]}","call_id":"call_2"}`),
			item(2, `{"type":"function_call_output","call_id":"call_2","output":"{\"output\":\"no rule to make target\",\"metadata\":{\"exit_code\":2}}"}`),
			item(3, `{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"npm test\"}","call_id":"call_3"}`),
			item(4, `{"type":"function_call_output","call_id":"call_3","output":"Exit code: 1\nWall time: 2.1 seconds\nOutput:\n1 failing"}`)},
			[]ev{{Role: RoleAssistant, Tool: "shell", Args: `{"command":["make"]}`, Call: "call_2"}, {Role: RoleTool, Tool: "shell", Failure: "exit code 2\nno rule to make target", Call: "call_2"},
				{Role: RoleAssistant, Tool: "exec_command", Args: `{"cmd":"npm test"}`, Call: "call_3"}, {Role: RoleTool, Tool: "exec_command", Failure: "Exit code: 1\nWall time: 2.1 seconds\nOutput:\n1 failing", Call: "call_3"}}, nil},
		{"parallel calls answered out of order, each by its call ID", []string{meta,
			item(1, `{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"npm test\"}","call_id":"call_p1"}`),
			item(1, `{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"npm run lint\"}","call_id":"call_p2"}`),
			item(2, `{"type":"function_call_output","call_id":"call_p2","output":"Process exited with code 0\nOutput:\nclean"}`),
			item(3, `{"type":"function_call_output","call_id":"call_p1","output":"Process exited with code 1\nOutput:\n2 failing"}`)},
			[]ev{{Role: RoleAssistant, Tool: "exec_command", Args: `{"cmd":"npm test"}`, Call: "call_p1"}, {Role: RoleAssistant, Tool: "exec_command", Args: `{"cmd":"npm run lint"}`, Call: "call_p2"},
				{Role: RoleTool, Tool: "exec_command", Result: "Process exited with code 0\nOutput:\nclean", Call: "call_p2"},
				{Role: RoleTool, Tool: "exec_command", Failure: "Process exited with code 1\nOutput:\n2 failing", Call: "call_p1"}}, nil},
		{"a command that runs on: what write_stdin reads is its output", []string{meta,
			item(1, `{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"npm test\",\"yield_time_ms\":1000}","call_id":"call_r"}`),
			item(2, `{"type":"function_call_output","call_id":"call_r","output":"Chunk ID: a1\nWall time: 1.0 seconds\nProcess running with session ID 4823\nOriginal token count: 0\nOutput:\n"}`),
			item(3, `{"type":"function_call","name":"write_stdin","arguments":"{\"session_id\":4823,\"chars\":\"\",\"max_output_tokens\":12000}","call_id":"call_w"}`),
			item(4, `{"type":"function_call_output","call_id":"call_w","output":"Chunk ID: b2\nWall time: 3.0 seconds\nProcess exited with code 1\nOutput:\n3 failing"}`)},
			[]ev{{Role: RoleAssistant, Tool: "exec_command", Args: `{"cmd":"npm test","yield_time_ms":1000}`, Call: "call_r"},
				{Role: RoleTool, Tool: "exec_command", Failure: "Chunk ID: b2\nWall time: 3.0 seconds\nProcess exited with code 1\nOutput:\n3 failing", Call: "call_r"}},
			map[string]int{DropBackground: 2}},
		{"custom tool calls (apply_patch)", []string{meta,
			item(1, `{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** End Patch","call_id":"call_4","status":"completed"}`),
			item(2, `{"type":"custom_tool_call_output","call_id":"call_4","output":"Success. Updated the following files:\nM a.go"}`)},
			[]ev{{Role: RoleAssistant, Tool: "apply_patch", Args: "*** Begin Patch\n*** End Patch", Call: "call_4"}, {Role: RoleTool, Tool: "apply_patch", Result: "Success. Updated the following files:\nM a.go", Call: "call_4"}}, nil},
		{"a user message only the UI event holds (Codex Desktop) is the user's; one that repeats a response item is kept once", []string{meta,
			item(1, `{"type":"message","role":"user","content":[{"type":"input_text","text":"rename the flag"}]}`),
			`{"timestamp":"2026-04-01T08:00:01Z","type":"event_msg","payload":{"type":"user_message","message":"rename the flag"}}`,
			`{"timestamp":"2026-04-01T08:00:05Z","type":"event_msg","payload":{"type":"user_message","message":"\n# Files mentioned by the user:\n\n## notes.vtt: /home/lena/notes.vtt\n\n## My request for Codex:\nsummarise the action items\n"}}`},
			[]ev{{Role: RoleUser, Content: "rename the flag"}, {Role: RoleUser, Content: "summarise the action items"}}, map[string]int{DropEventMsg: 1, DropIDEContext: 1}},
		{"collaboration mode, skills and shell-command preambles are left out", []string{meta,
			item(1, `{"type":"message","role":"developer","content":[{"type":"input_text","text":"<collaboration_mode># Collaboration Mode: Default</collaboration_mode>"}]}`),
			item(1, `{"type":"message","role":"user","content":[{"type":"input_text","text":"<user_shell_command>git status</user_shell_command>"}]}`),
			item(2, `{"type":"message","role":"user","content":[{"type":"input_text","text":"show tools"}]}`)},
			[]ev{{Role: RoleUser, Content: "show tools"}}, map[string]int{DropInstructions: 1, DropEnvironment: 1}},
		{"reasoning, turn contexts and UI events left out; a compaction is context", []string{meta,
			`{"timestamp":"2026-04-01T08:00:01Z","type":"turn_context","payload":{"cwd":"/srv/shop","model":"gpt-5-codex"}}`,
			item(2, `{"type":"reasoning","summary":[],"encrypted_content":"gAAA"}`),
			`{"timestamp":"2026-04-01T08:00:03Z","type":"event_msg","payload":{"type":"agent_message","message":"hi"}}`,
			`{"timestamp":"2026-04-01T08:00:04Z","type":"compacted","payload":{"message":"The user ships on Fridays."}}`},
			[]ev{{Role: RoleSystem, Content: "Summary of the conversation before it was compacted (context, not the user's words):\nThe user ships on Fridays."}},
			map[string]int{DropTurnContext: 1, DropThinking: 1, DropEventMsg: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := ParseTranscript([]byte(strings.Join(c.lines, "\n")), nil)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Format != FormatCodex || tr.SessionID != "0199-abc" || tr.Project != "/srv/shop" || tr.Agent != "codex" {
				t.Errorf("format %q, session %q, project %q, agent %q", tr.Format, tr.SessionID, tr.Project, tr.Agent)
			}
			if got := eventsOf(tr.Events); !slices.Equal(got, c.want) {
				t.Errorf("events\n got %+v\nwant %+v", got, c.want)
			}
			if !maps.Equal(tr.Dropped, c.dropped) {
				t.Errorf("dropped %v, want %v", tr.Dropped, c.dropped)
			}
			if want := time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC); !tr.Events[0].TS.After(want.Add(-time.Second)) {
				t.Errorf("first event at %v, want the record's time", tr.Events[0].TS)
			}
		})
	}
}

// A rollout whose session_meta names the repository's remote is that
// repository's session, wherever it was checked out.
func TestCodexRolloutProjectIsItsRemote(t *testing.T) {
	data := `{"timestamp":"2026-05-11T11:26:55Z","type":"session_meta","payload":{"id":"0199-r","cwd":"/Users/ana/wt/fix","git":{"commit_hash":"c8c2","branch":"fix","repository_url":"git@github.com:acme/shop.git"}}}
{"timestamp":"2026-05-11T11:27:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"fix the checkout test"}]}}`
	tr, err := ParseTranscript([]byte(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := ProjectOf(tr.Project, tr.ProjectName); p != (Project{ID: "github.com/acme/shop", Name: "shop"}) {
		t.Errorf("project %q is %+v, want the remote's repository", tr.Project, p)
	}
}

func TestCodexOlderRollout(t *testing.T) {
	data := `{"id":"old-1","timestamp":"2025-05-01T10:00:00Z","instructions":null}
{"type":"message","role":"user","content":[{"type":"input_text","text":"rename the flag"}]}
{"type":"function_call","name":"shell","arguments":"{\"command\":[\"rg\",\"flag\"]}","call_id":"c1"}
{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"\",\"metadata\":{\"exit_code\":1}}"}`
	tr, err := ParseTranscript([]byte(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []ev{{Role: RoleUser, Content: "rename the flag"}, {Role: RoleAssistant, Tool: "shell", Args: `{"command":["rg","flag"]}`, Call: "c1"}, {Role: RoleTool, Tool: "shell", Failure: "exit code 1\n", Call: "c1"}}
	if tr.Format != FormatCodex || tr.SessionID != "old-1" || !slices.Equal(eventsOf(tr.Events), want) {
		t.Errorf("got %s %s %+v", tr.Format, tr.SessionID, eventsOf(tr.Events))
	}
}

func TestHugeOutputsAreCutWithTheirHash(t *testing.T) {
	big := strings.Repeat("line of a very long build log\n", 20000) // 600 KB
	line := func(n int, rest string) string { return ccLine(n, rest) }
	data := strings.Join([]string{
		line(1, `"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"build.log"}}]}`),
		line(2, `"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":`+quote(big)+`}]}`),
	}, "\n")
	tr, err := ParseTranscript([]byte(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	res := tr.Events[1].ToolResult
	if len(res) > MaxToolOutput || !strings.HasPrefix(res, "line of a very long build log") || !strings.HasSuffix(res, "build log\n") {
		t.Fatalf("cut result is %d bytes (bound %d): %.80q…", len(res), MaxToolOutput, res)
	}
	if !strings.Contains(res, "of 600000 bytes cut here; sha256 ") || tr.Cut != 1 {
		t.Errorf("the marker does not give the length and hash (cut %d): %q", tr.Cut, res[MaxToolOutput/2:MaxToolOutput/2+400])
	}
	if err := tr.Normalize(DefaultTenant, time.Now()); err != nil {
		t.Errorf("a cut session must pass the field limits: %v", err)
	}
}

func quote(s string) string {
	b := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
	return `"` + b + `"`
}

// The real sessions: the user's own words are user events, tool results
// never are, and what is not conversation is counted.
func TestClaudeCodeSamples(t *testing.T) {
	cases := []struct {
		file, session, firstUser string
		users                    int
	}{
		{"short.jsonl", "55604662-cf2a-4331-851a-ec234028f8ca", "mix phx.server doesnt seem to start", 1},
		{"tool_heavy.jsonl", "d6e0bada-1959-4eec-a9d2-0bfade768d8f", "start phoenix in background", 2},
		{"subagent.jsonl", "491e126e-1e71-469c-ade2-fcc8af567c74", "websearch to learn how to fastest setup credo", 2},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "testdata", "claude-code", c.file))
			if err != nil {
				t.Fatal(err)
			}
			tr, err := ParseTranscript(data, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tr.SessionID != c.session || tr.Project != "/home/marco/projects/spotter" || tr.StartedAt.Year() != 2026 {
				t.Errorf("session %q, project %q, started %v", tr.SessionID, tr.Project, tr.StartedAt)
			}
			var users []string
			calls, results := map[string]int{}, map[string]int{}
			for _, e := range tr.Events {
				switch {
				case e.Role == RoleUser:
					users = append(users, e.Content)
					if e.ToolResult != "" || strings.Contains(e.Content, "tool_use_id") || strings.HasPrefix(e.Content, "<") {
						t.Errorf("a user event holds harness or tool text: %.80q", e.Content)
					}
				case e.Role == RoleAssistant && e.ToolName != "":
					calls[e.ToolName]++
				case e.Role == RoleTool:
					results[e.ToolName]++
				}
			}
			if len(users) != c.users || !strings.HasPrefix(users[0], c.firstUser) {
				t.Errorf("user events %q, want %d starting %q", users, c.users, c.firstUser)
			}
			for name, n := range calls {
				// A call started in the background has no result until its
				// notice or a poll arrives.
				if results[name] != n && results[name]+tr.Dropped[DropBackground] != n {
					t.Errorf("%d %s calls but %d results", n, name, results[name])
				}
			}
			if tr.Dropped[DropProgress] == 0 || tr.Dropped[DropSnapshot] == 0 {
				t.Errorf("dropped %v: progress and snapshots should be counted", tr.Dropped)
			}
			if err := tr.Normalize(DefaultTenant, time.Now()); err != nil {
				t.Error(err)
			}
		})
	}
}

// A subagent's own log, from the subagents/ folder beside the session, is
// read with its parent, in time order, marked.
func TestClaudeCodeSubagentFiles(t *testing.T) {
	parent := ccLine(1, `"type":"user","message":{"role":"user","content":"audit the dependencies"}`) + "\n" +
		ccLine(5, `"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"The audit found one CVE."}]}`)
	sub := `{"sessionId":"s-1","agentId":"a1","isSidechain":true,"timestamp":"2026-03-02T09:00:02Z","type":"user","message":{"role":"user","content":"run mix_audit"}}` + "\n" +
		`{"sessionId":"s-1","agentId":"a1","isSidechain":true,"timestamp":"2026-03-02T09:00:03Z","type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"1 vulnerability."}]}}`
	tr, err := ParseClaudeCode([]byte(parent), nil, []byte(sub))
	if err != nil {
		t.Fatal(err)
	}
	want := []ev{{Role: RoleUser, Content: "audit the dependencies"}, {Role: RoleAssistant, Content: "[subagent] task: run mix_audit"},
		{Role: RoleAssistant, Content: "[subagent] 1 vulnerability."}, {Role: RoleAssistant, Content: "The audit found one CVE."}}
	if got := eventsOf(tr.Events); !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestAgentLogErrors(t *testing.T) {
	for name, data := range map[string]string{
		"a broken line":       ccLine(1, `"type":"user","message":{"role":"user","content":"hi"}`) + "\n{not json",
		"only bookkeeping":    `{"type":"file-history-snapshot","messageId":"m","snapshot":{}}` + "\n" + ccLine(1, `"type":"progress","data":{}`),
		"a broken codex line": `{"timestamp":"2026-04-01T08:00:00Z","type":"session_meta","payload":{"id":"x"}}` + "\n{",
	} {
		if _, err := ParseTranscript([]byte(data), nil); err == nil || !IsInvalid(err) {
			t.Errorf("%s: got %v, want an invalid-input error", name, err)
		}
	}
}
