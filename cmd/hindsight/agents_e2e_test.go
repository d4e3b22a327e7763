package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sampleDir holds the real Claude Code sessions (MIT; see its LICENSE).
var sampleDir = filepath.Join("..", "..", "testdata", "claude-code")

// hook runs `hindsight hook ARGS` as Claude Code does: a child process
// with the payload on stdin. It returns stdout and stderr.
func hook(t *testing.T, payload any, args ...string) (string, string) {
	t.Helper()
	in, _ := json.Marshal(payload)
	cmd := childCommand(append([]string{"hook"}, args...))
	cmd.Stdin = bytes.NewReader(in)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("hook %v exited with %v (a hook must always exit 0); stderr: %s", args, err, errOut.String())
	}
	return out.String(), errOut.String()
}

type hookOutput struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

func decodeHook(t *testing.T, out string) hookOutput {
	t.Helper()
	var h hookOutput
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatalf("the hook printed %q, not the JSON Claude Code reads: %v", out, err)
	}
	return h
}

// A Claude Code session, ended through the hook, becomes an episode with
// its real task and time, and the next session in the project starts with
// what was learned; a prompt gets what is relevant to it, and nothing
// when nothing is. The project is the repository: sessions in two of its
// worktrees are the project's sessions in a third.
func TestClaudeCodeHook(t *testing.T) {
	st := startTestDev(t, t.TempDir())
	defer st.Close()
	t.Setenv("HINDSIGHT_CACHE", t.TempDir())
	url := st.mcpURL()
	dirs := gitRepo(t, t.TempDir(), "spotter", "spotter-dialyzer", "spotter-next")
	project := dirs[2] // the worktree the next session starts in
	end := func(file, cwd string) {
		path, _ := filepath.Abs(filepath.Join(sampleDir, file))
		_, errOut := hook(t, map[string]any{"session_id": "ignored-the-log-says", "transcript_path": path, "cwd": cwd,
			"hook_event_name": "SessionEnd", "reason": "exit"}, "claude-code", "--url", url, "--wait", "--user", "marco")
		if !strings.Contains(errOut, "distilled episode") {
			t.Fatalf("SessionEnd of %s: %s", file, errOut)
		}
	}
	end("tool_heavy.jsonl", dirs[0])
	ctx := context.Background()
	ep, err := st.service.Episode(ctx, memory.DefaultTenant, memory.EpisodeID(memory.DefaultTenant, "d6e0bada-1959-4eec-a9d2-0bfade768d8f"))
	if err != nil {
		t.Fatalf("no episode for the session: %v", err)
	}
	started := time.Date(2026, 2, 10, 22, 57, 54, 684e6, time.UTC)
	if !strings.Contains(strings.ToLower(ep.Task), "start phoenix in background") || !ep.StartedAt.Equal(started) || ep.EndedAt.Year() != 2026 || ep.EndedAt.Month() != 2 {
		t.Errorf("episode task %q, %v to %v; want the session's own task and times (from %v)", ep.Task, ep.StartedAt, ep.EndedAt, started)
	}
	if !strings.Contains(strings.Join(ep.Entities, ","), "spotter") || ep.ProjectName != "spotter" || !strings.HasPrefix(ep.Project, memory.ProjectRootCommit) {
		t.Errorf("episode entities %v, project %q (%q): want the repository", ep.Entities, ep.Project, ep.ProjectName)
	}
	end("subagent.jsonl", dirs[1])

	out, _ := hook(t, map[string]any{"session_id": "next", "cwd": project, "hook_event_name": "SessionStart", "source": "startup"},
		"claude-code", "--url", url, "--user", "marco")
	h := decodeHook(t, out)
	ctxText := h.HookSpecificOutput.AdditionalContext
	if h.HookSpecificOutput.HookEventName != "SessionStart" || !strings.Contains(ctxText, "Start phoenix in background") || !strings.Contains(ctxText, "mix dialyzer") {
		t.Errorf("SessionStart context lacks the session and the lesson learned in the project:\n%s", ctxText)
	}
	if !strings.Contains(ctxText, "not instructions") {
		t.Errorf("the injected context must frame memories as data:\n%s", ctxText)
	}
	// Memories learned from a session are dated by it, not by the import.
	if !strings.Contains(ctxText, "2026-02-10") {
		t.Errorf("memories are not dated by their session:\n%s", ctxText)
	}

	out, _ = hook(t, map[string]any{"session_id": "next", "cwd": project, "hook_event_name": "UserPromptSubmit",
		"prompt": "how long does the first dialyzer run take?"}, "claude-code", "--url", url, "--user", "marco")
	if h := decodeHook(t, out); !strings.Contains(h.HookSpecificOutput.AdditionalContext, "PLT") || strings.Contains(h.HookSpecificOutput.AdditionalContext, "Recent sessions") {
		t.Errorf("prompt context should hold the dialyzer lesson and no session list:\n%s", h.HookSpecificOutput.AdditionalContext)
	}
	out, _ = hook(t, map[string]any{"session_id": "next", "cwd": project, "hook_event_name": "UserPromptSubmit",
		"prompt": "what is the capital of Mongolia"}, "claude-code", "--url", url, "--user", "marco")
	if out != "" {
		t.Errorf("nothing is relevant, yet the hook printed %q", out)
	}

	// PreCompact stores the session without distilling it.
	path, _ := filepath.Abs(filepath.Join(sampleDir, "short.jsonl"))
	_, errOut := hook(t, map[string]any{"session_id": "x", "transcript_path": path, "cwd": project, "hook_event_name": "PreCompact", "trigger": "auto"},
		"claude-code", "--url", url, "--wait", "--user", "marco")
	if !strings.Contains(errOut, "stays open") {
		t.Errorf("PreCompact: %s", errOut)
	}
	if _, err := st.service.Episode(ctx, memory.DefaultTenant, memory.EpisodeID(memory.DefaultTenant, "55604662-cf2a-4331-851a-ec234028f8ca")); !memory.IsNotFound(err) {
		t.Errorf("a compacted session was distilled before it ended: %v", err)
	}
}

// A hook whose server is down exits 0 at once, injects nothing and says
// why on stderr: the agent's session is never held up.
func TestClaudeCodeHookWithTheServerDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://%s/mcp", l.Addr())
	l.Close()
	t.Setenv("HINDSIGHT_CACHE", t.TempDir())
	path, _ := filepath.Abs(filepath.Join(sampleDir, "short.jsonl"))
	for _, p := range []map[string]any{
		{"session_id": "s", "cwd": "/srv/app", "hook_event_name": "SessionStart", "source": "resume"},
		{"session_id": "s", "cwd": "/srv/app", "hook_event_name": "UserPromptSubmit", "prompt": "deploy it"},
		{"session_id": "s", "cwd": "/srv/app", "hook_event_name": "SessionEnd", "transcript_path": path},
		{"hook_event_name": "SessionStart"}, // no cwd: nothing to recall
	} {
		start := time.Now()
		out, errOut := hook(t, p, "claude-code", "--url", url)
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("%v: the hook took %v with the server down; the limit is 3 s", p["hook_event_name"], took)
		}
		if out != "" {
			t.Errorf("%v: printed %q with the server down", p["hook_event_name"], out)
		}
		if p["cwd"] != nil && p["hook_event_name"] != "SessionEnd" && !strings.Contains(errOut, "hindsight hook") {
			t.Errorf("%v: no cause on stderr: %q", p["hook_event_name"], errOut)
		}
	}
	if out, _ := hook(t, "not a payload", "claude-code", "--url", url); out != "" {
		t.Errorf("a bad payload printed %q", out)
	}
}

func TestClaudeCodePrintConfig(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"hook", "claude-code", "--print-config"}, &out, &out); err != 0 {
		t.Fatalf("exit %d: %s", err, out.String())
	}
	text := out.String()
	i := strings.Index(text, "{")
	j := strings.Index(text, "\n}\n")
	var block struct {
		Hooks map[string][]struct {
			Hooks []struct{ Type, Command string }
		}
	}
	if i < 0 || j < 0 || json.Unmarshal([]byte(text[i:j+2]), &block) != nil {
		t.Fatalf("no settings.json block in:\n%s", text)
	}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreCompact", "SessionEnd"} {
		hs := block.Hooks[ev]
		if len(hs) != 1 || len(hs[0].Hooks) != 1 || !strings.HasSuffix(hs[0].Hooks[0].Command, "hook claude-code") {
			t.Errorf("%s: %+v", ev, hs)
		}
	}
	if !strings.Contains(text, "claude mcp add --transport http") {
		t.Errorf("no `claude mcp add` line:\n%s", text)
	}
}

// Importing the same logs twice gives the same episodes and memories as
// importing them once; a log that grew is distilled again and its
// memories merge with what is there.
func TestImportIsIdempotent(t *testing.T) {
	st := startTestDev(t, t.TempDir())
	defer st.Close()
	url := st.mcpURL()
	dir := filepath.Join(t.TempDir(), "projects", "-home-marco-projects-spotter")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"short.jsonl", "tool_heavy.jsonl", "subagent.jsonl"} {
		b, err := os.ReadFile(filepath.Join(sampleDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Dir(dir)
	imp := func(args ...string) string {
		var out bytes.Buffer
		if code := run(context.Background(), append([]string{"import", "--from", "claude-code", "--url", url}, append(args, root)...), &out, &out); code != 0 {
			t.Fatalf("import %v: exit %d: %s", args, code, out.String())
		}
		return out.String()
	}
	ctx := context.Background()
	state := func() (episodes int, live []string) {
		eps, err := st.runtime.Store.Episodes(ctx, memory.EpisodeFilter{Tenant: memory.DefaultTenant})
		if err != nil {
			t.Fatal(err)
		}
		ms, err := st.runtime.Store.Memories(ctx, memory.MemoryFilter{Tenant: memory.DefaultTenant, Statuses: []memory.Status{memory.StatusLive}})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			live = append(live, m.Content)
		}
		return len(eps), live
	}

	if out := imp("--dry-run"); !strings.Contains(out, "would import 3 of 3 files") {
		t.Errorf("dry run: %s", out)
	}
	if n, live := state(); n != 0 || len(live) != 0 {
		t.Fatalf("a dry run stored %d episodes and %d memories", n, len(live))
	}
	first := imp()
	if !strings.Contains(first, "imported 3 sessions") {
		t.Fatalf("first import: %s", first)
	}
	// What the harness wrote is counted by kind.
	if !regexp.MustCompile(`left out of the logs: \d+ [a-z-]+`).MatchString(first) || !strings.Contains(first, " progress") {
		t.Errorf("the import summary does not count what was left out, by kind: %s", first)
	}
	n1, live1 := state()
	second := imp()
	n2, live2 := state()
	if n1 != 3 || n2 != n1 || len(live2) != len(live1) || len(live1) == 0 {
		t.Errorf("episodes %d then %d, live memories %d then %d; want 3 episodes and the same memories\nfirst: %s\nsecond: %s", n1, n2, len(live1), len(live2), first, second)
	}

	// The session resumes and grows: re-imported, it is distilled again,
	// whole, and nothing is duplicated.
	grown := filepath.Join(dir, "subagent.jsonl")
	f, err := os.OpenFile(grown, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, `{"type":"user","sessionId":"491e126e-1e71-469c-ade2-fcc8af567c74","cwd":"/home/marco/projects/spotter","timestamp":"2026-02-11T09:00:00Z","message":{"role":"user","content":"From now on, always run mix format before every commit in this project."}}`)
	fmt.Fprintln(f, `{"type":"assistant","sessionId":"491e126e-1e71-469c-ade2-fcc8af567c74","cwd":"/home/marco/projects/spotter","timestamp":"2026-02-11T09:00:05Z","message":{"role":"assistant","content":[{"type":"text","text":"Understood, I will run mix format before committing."}]}}`)
	f.Close()
	imp()
	n3, live3 := state()
	ep, err := st.service.Episode(ctx, memory.DefaultTenant, memory.EpisodeID(memory.DefaultTenant, "491e126e-1e71-469c-ade2-fcc8af567c74"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range live3 {
		if seen[c] {
			t.Errorf("memory stored twice after the grown session was re-imported: %q", c)
		}
		seen[c] = true
	}
	if n3 != 3 || ep.EventCount != 44 || !strings.Contains(strings.Join(live3, "\n"), "mix format") || len(live3) != len(live1)+1 {
		t.Errorf("after growing: %d episodes, the session's episode has %d events (want 44), live memories %d (want %d):\n%s", n3, ep.EventCount, len(live3), len(live1)+1, strings.Join(live3, "\n"))
	}
}

// bigClaudeSession writes a Claude Code log of about the size real long
// sessions have: lines records, most of them tool calls with large
// outputs, progress records and thinking, with a failure and its fix.
func bigClaudeSession(t *testing.T, path string, lines int) {
	t.Helper()
	var b bytes.Buffer
	ts := time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)
	rec := func(typ string, extra string) {
		ts = ts.Add(3 * time.Second)
		fmt.Fprintf(&b, `{"type":%q,"sessionId":"big-1","cwd":"/home/dana/src/ledger","timestamp":%q,%s}`+"\n", typ, ts.Format(time.RFC3339Nano), extra)
	}
	q := func(s string) string { v, _ := json.Marshal(s); return string(v) }
	rec("user", `"message":{"role":"user","content":"The nightly reconciliation job times out; find out why and fix it. Reports must stay in UTC."}`)
	line := "2026-05-04T02:00:01Z INFO reconcile batch=17 rows=50000 took=1.2s\n"
	for i := 0; b.Len() < 3<<20 || i*5 < lines; i++ {
		id := fmt.Sprintf("toolu_%04d", i)
		output := strings.Repeat(line, 40) // 2.6 KB, and now and then a whole log
		if i%10 == 0 {
			output = strings.Repeat(line, 700)
		}
		rec("assistant", `"message":{"role":"assistant","content":[{"type":"thinking","thinking":"Looking at batch `+fmt.Sprint(i)+`."}]}`)
		rec("progress", `"data":{"type":"hook_progress","hookEvent":"PreToolUse"}`)
		rec("assistant", `"message":{"role":"assistant","content":[{"type":"tool_use","id":"`+id+`","name":"Read","input":{"file_path":"/var/log/reconcile/`+fmt.Sprint(i)+`.log"}}]}`)
		rec("user", `"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"`+id+`","content":`+q(output)+`}]}`)
		rec("progress", `"data":{"type":"hook_progress","hookEvent":"PostToolUse"}`)
	}
	rec("assistant", `"message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_fail","name":"Bash","input":{"command":"psql -c 'VACUUM ANALYZE ledger_entries'"}}]}`)
	rec("user", `"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_fail","is_error":true,"content":"ERROR: permission denied for table ledger_entries"}]}`)
	rec("assistant", `"message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_fix","name":"Bash","input":{"command":"psql -U maintenance -c 'VACUUM ANALYZE ledger_entries'"}}]}`)
	rec("user", `"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_fix","content":"VACUUM"}]}`)
	rec("assistant", `"message":{"role":"assistant","content":[{"type":"text","text":"The job timed out because ledger_entries had stale statistics; VACUUM ANALYZE has to run as the maintenance role, since the app role lacks the permission."}]}`)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A real-sized session (3 MB, 2,000 lines) is accepted and distilled: its
// huge outputs are cut, never refused. (How long it takes is measured by
// the log line, not asserted: speed is for benchmarks.)
func TestLargeClaudeCodeSession(t *testing.T) {
	st := startTestDev(t, t.TempDir())
	defer st.Close()
	path := filepath.Join(t.TempDir(), "big.jsonl")
	bigClaudeSession(t, path, 2000)
	info, _ := os.Stat(path)
	raw, _ := os.ReadFile(path)
	n := bytes.Count(raw, []byte("\n"))
	if info.Size() < 3<<20 || n < 2000 {
		t.Fatalf("the fixture is %d bytes, %d lines; want 3 MB and 2,000 lines", info.Size(), n)
	}
	start := time.Now()
	var out bytes.Buffer
	if code := run(context.Background(), []string{"session-end", "--url", st.mcpURL(), "--file", path, "--wait"}, &out, &out); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	t.Logf("%d bytes, %d lines: accepted and distilled in %v", info.Size(), n, time.Since(start).Round(time.Millisecond))
	events, err := st.runtime.Store.SessionEvents(context.Background(), memory.DefaultTenant, "big-1")
	if err != nil {
		t.Fatal(err)
	}
	cut := 0
	for _, e := range events {
		if strings.Contains(e.ToolResult, "bytes cut here; sha256 ") {
			cut++
		}
	}
	if cut == 0 || len(events) < 500 {
		t.Errorf("%d events stored, %d outputs cut; want the whole logs cut around a marker", len(events), cut)
	}
	if !strings.Contains(out.String(), "completed") || !strings.Contains(out.String(), "VACUUM ANALYZE has to run") || !strings.Contains(out.String(), "UTC") {
		t.Errorf("the session was not distilled into its lesson:\n%s", out.String())
	}
}

// Codex's notify program hands a session over from its rollout, found by
// the thread ID; import reads the same rollouts.
func TestCodexNotifyAndImport(t *testing.T) {
	st := startTestDev(t, t.TempDir())
	defer st.Close()
	t.Setenv("HINDSIGHT_CACHE", t.TempDir())
	url := st.mcpURL()
	sessions := filepath.Join(t.TempDir(), "sessions")
	day := filepath.Join(sessions, "2026", "04", "01")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	const id = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
	name := "rollout-2026-04-01T08-00-00-" + id + ".jsonl"
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "codex", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(day, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	note := `{"type":"agent-turn-complete","thread-id":"` + id + `","turn-id":"1","cwd":"/home/lena/src/shop","input-messages":["fix the checkout tests"],"last-assistant-message":"done"}`
	out, err := childCommand([]string{"hook", "codex", "--url", url, "--sessions", sessions, "--wait", "--user", "lena", note}).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "distilled episode") {
		t.Fatalf("codex notify: %v: %s", err, out)
	}
	ctx := context.Background()
	ep, err := st.service.Episode(ctx, memory.DefaultTenant, memory.EpisodeID(memory.DefaultTenant, id))
	if err != nil {
		t.Fatal(err)
	}
	if len(ep.Failures) != 1 || !strings.Contains(ep.Failures[0].Cause, "ECONNREFUSED") || !ep.EndedAt.Equal(time.Date(2026, 4, 1, 8, 0, 37, 0, time.UTC)) {
		t.Errorf("episode %+v: want the failed test run and the rollout's times", ep)
	}
	ms, err := st.runtime.Store.Memories(ctx, memory.MemoryFilter{Tenant: memory.DefaultTenant})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range ms {
		texts = append(texts, m.Content)
		if m.CreatedAt.Year() != 2026 || m.CreatedAt.Month() != 4 {
			t.Errorf("memory %q is dated %v, not by its session", m.Content, m.CreatedAt)
		}
	}
	all := strings.Join(texts, "\n")
	if !strings.Contains(all, "REDIS_URL=redis://localhost:6380") || !strings.Contains(all, "integers in cents") {
		t.Errorf("memories:\n%s", all)
	}

	var imp bytes.Buffer
	if code := run(ctx, []string{"import", "--from", "codex", "--url", url, "--user", "lena", sessions}, &imp, &imp); code != 0 || !strings.Contains(imp.String(), "imported 1 sessions") {
		t.Fatalf("import: exit %d: %s", code, imp.String())
	}
	after, _ := st.runtime.Store.Memories(ctx, memory.MemoryFilter{Tenant: memory.DefaultTenant})
	if len(after) != len(ms) {
		t.Errorf("importing a session the hook handed over changed the memories: %d → %d", len(ms), len(after))
	}
}

// session_end takes an OpenAI chat as it is, and refuses events and
// messages together.
func TestSessionEndTakesMessages(t *testing.T) {
	st := startTestDev(t, t.TempDir())
	defer st.Close()
	s := connect(t, st.mcpURL())
	msgs := []map[string]any{
		{"role": "system", "content": "You are a support agent."},
		{"role": "user", "content": "Please always answer me in German."},
		{"role": "assistant", "content": "Natürlich, ab jetzt auf Deutsch."},
	}
	out := call[struct {
		EpisodeID string `json:"episode_id"`
		Memories  []struct {
			Content string `json:"content"`
		} `json:"memories"`
	}](t, s, "session_end", map[string]any{"session_id": "chat-7", "messages": msgs, "wait": true})
	if out.EpisodeID == "" || len(out.Memories) == 0 || !strings.Contains(out.Memories[0].Content, "German") {
		t.Errorf("got %+v", out)
	}
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "session_end", Arguments: map[string]any{
		"session_id": "chat-8", "messages": msgs, "events": []any{map[string]any{"role": "user", "content": "hi"}}}})
	if err != nil || !res.IsError || !strings.Contains(toolText(res), "events or messages, not both") {
		t.Errorf("both given: %v %v", err, res)
	}
}
