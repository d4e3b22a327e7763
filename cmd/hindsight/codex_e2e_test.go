package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/hindsight-memory/hindsight/memory"
)

// codexHookFields are the fields of each hook's payload in Codex's
// published schemas (codex-rs/hooks/schema/generated/
// <event>.command.input.schema.json: all required, no others allowed).
var codexHookFields = map[string][]string{
	"session-start":      {"active_profile", "cwd", "hook_event_name", "model", "permission_mode", "session_id", "source", "transcript_path"},
	"user-prompt-submit": {"cwd", "hook_event_name", "model", "permission_mode", "prompt", "session_id", "transcript_path", "turn_id"},
	"stop":               {"cwd", "hook_event_name", "last_assistant_message", "model", "permission_mode", "session_id", "stop_hook_active", "transcript_path", "turn_id"},
	"pre-compact":        {"cwd", "hook_event_name", "model", "session_id", "transcript_path", "trigger", "turn_id"},
}

// codexPayload is a recorded Codex hook payload (testdata/codex/hooks),
// with fields set.
func codexPayload(t *testing.T, name string, set map[string]any) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "codex", "hooks", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for k, v := range set {
		p[k] = v
	}
	return p
}

// The recorded payloads hold what Codex's schemas say, and nothing else.
func TestCodexHookPayloadsFollowTheSchema(t *testing.T) {
	for name, fields := range codexHookFields {
		p := codexPayload(t, name, nil)
		var got []string
		for k := range p {
			got = append(got, k)
		}
		slices.Sort(got)
		if !slices.Equal(got, fields) {
			t.Errorf("%s: fields %v, want %v", name, got, fields)
		}
	}
}

// gitRepo makes a repository with one commit in parent/name, and a
// worktree of it beside it for each of worktrees.
func gitRepo(t *testing.T, parent, name string, worktrees ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on this machine")
	}
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	dir := filepath.Join(parent, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git(dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte(dir), 0o644); err != nil {
		t.Fatal(err)
	}
	git(dir, "add", "README")
	git(dir, "commit", "-q", "-m", "first")
	dirs := []string{dir}
	for _, w := range worktrees {
		wt := filepath.Join(parent, w)
		git(dir, "worktree", "add", "-q", "-b", w, wt)
		dirs = append(dirs, wt)
	}
	return dirs
}

// waitForExit waits, without polling, until process pid (not a child of
// this one) exits.
func waitForExit(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	exited := processExit(pid)
	if exited == nil {
		t.Fatalf("cannot watch process %d", pid)
	}
	select {
	case <-exited:
	case <-time.After(within):
		t.Fatalf("process %d still runs after %v", pid, within)
	}
}

// lockHolder is the process that waits for a Codex session: the process
// ID in the session's lock file.
func lockHolder(t *testing.T, sessionID string) int {
	t.Helper()
	_, lock, err := codexStateFiles(sessionID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(lock)
	if err != nil {
		t.Fatalf("no process waits for session %s: %v", sessionID, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("lock file %s: %q", lock, b)
	}
	return pid
}

// handOvers counts the hand-overs of a session in hooks.log.
func handOvers(t *testing.T, sessionID string) (int, string) {
	t.Helper()
	dir, _ := cacheDir()
	b, _ := os.ReadFile(filepath.Join(dir, "hooks.log"))
	return strings.Count(string(b), "hindsight: session "+sessionID+" "), string(b)
}

// Codex's hooks: a 50-turn session, whose Stop comes at every turn, is
// handed over once, when Codex exits (a session that pauses for --idle is
// handed over then, and again after it goes on); the session's worktree
// and the main checkout are one project; SessionStart and
// UserPromptSubmit inject what was learned there within 600 tokens.
func TestCodexHooks(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the Codex process's exit is watched on Linux only")
	}
	st := startTestDev(t, t.TempDir())
	defer st.Close()
	t.Setenv("HINDSIGHT_CACHE", t.TempDir())
	url := st.mcpURL()
	dirs := gitRepo(t, t.TempDir(), "shop", "shop-checkout-fix")
	repo, worktree := dirs[0], dirs[1]

	sessions := filepath.Join(t.TempDir(), "sessions")
	day := filepath.Join(sessions, "2026", "04", "01")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	const id = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
	rollout := filepath.Join(day, "rollout-2026-04-01T08-00-00-"+id+".jsonl")
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "codex", filepath.Base(rollout)))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rollout, b, 0o644); err != nil {
		t.Fatal(err)
	}

	// Codex stands in: a process whose exit ends the session.
	agent := exec.Command("sleep", "600")
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	defer agent.Process.Kill()
	flags := []string{"codex", "--url", url, "--user", "lena", "--sessions", sessions, "--agent-pid", strconv.Itoa(agent.Process.Pid)}
	for turn := 1; turn <= 50; turn++ {
		last := fmt.Sprintf("turn %d done", turn)
		if turn == 1 {
			// The payload of the Stop that starts the waiting process
			// reaches it through a file, whatever its size.
			last = strings.Repeat("The checkout tests pass now. ", 300<<10/29)
		}
		start := time.Now()
		out, errOut := hook(t, codexPayload(t, "stop", map[string]any{"session_id": id, "transcript_path": rollout, "cwd": worktree,
			"turn_id": fmt.Sprintf("turn-%d", turn), "last_assistant_message": last}), flags...)
		if took := time.Since(start); took > 2*time.Second || out != "" || errOut != "" {
			t.Fatalf("Stop of turn %d took %v, printed %q, said %q", turn, took, out, errOut)
		}
	}
	if n, log := handOvers(t, id); n != 0 {
		t.Fatalf("handed over %d times before the session ended:\n%s", n, log)
	}
	waiter := lockHolder(t, id)
	agent.Process.Kill()
	agent.Wait()
	waitForExit(t, waiter, 2*time.Minute)
	if n, log := handOvers(t, id); n != 1 || !strings.Contains(log, "distilled episode") {
		t.Fatalf("a 50-turn session was handed over %d times; want once, at its end:\n%s", n, log)
	}
	ctx := context.Background()
	ep, err := st.service.Episode(ctx, memory.DefaultTenant, memory.EpisodeID(memory.DefaultTenant, id))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ep.Project, memory.ProjectRootCommit) || ep.ProjectName != "shop" {
		t.Errorf("episode project %q (%q); want the repository's root commit and its name", ep.Project, ep.ProjectName)
	}

	// From the main checkout: the session in the worktree is the
	// project's; a prompt gets the lesson.
	for _, c := range []struct {
		payload map[string]any
		want    []string
	}{
		{codexPayload(t, "session-start", map[string]any{"cwd": repo}), []string{"Recent sessions in shop", "checkout tests", "REDIS_URL"}},
		{codexPayload(t, "user-prompt-submit", map[string]any{"cwd": repo}), []string{"REDIS_URL=redis://localhost:6380"}},
	} {
		start := time.Now()
		out, errOut := hook(t, c.payload, "codex", "--url", url, "--user", "lena")
		took := time.Since(start)
		h := decodeHook(t, out)
		text := h.HookSpecificOutput.AdditionalContext
		if h.HookSpecificOutput.HookEventName != c.payload["hook_event_name"] || took > 2*time.Second {
			t.Errorf("%v: event %q, took %v; stderr %s", c.payload["hook_event_name"], h.HookSpecificOutput.HookEventName, took, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%v: no %q in the context:\n%s", c.payload["hook_event_name"], w, text)
			}
		}
		if len(text) > 4*600 {
			t.Errorf("%v: %d characters injected, over 600 tokens", c.payload["hook_event_name"], len(text))
		}
	}

	// A session that pauses for --idle is handed over then, by a process
	// that leaves by itself.
	const other = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a60"
	rollout2 := filepath.Join(day, "rollout-2026-04-01T09-00-00-"+other+".jsonl")
	if err := os.WriteFile(rollout2, bytes.ReplaceAll(b, []byte(id), []byte(other)), 0o644); err != nil {
		t.Fatal(err)
	}
	for turn := 1; turn <= 3; turn++ {
		hook(t, codexPayload(t, "stop", map[string]any{"session_id": other, "transcript_path": rollout2, "cwd": worktree}),
			"codex", "--url", url, "--user", "lena", "--idle", "300ms")
	}
	waitForExit(t, lockHolder(t, other), 2*time.Minute)
	if n, log := handOvers(t, other); n < 1 {
		t.Fatalf("an idle session was not handed over:\n%s", log)
	}
	if _, err := st.service.Episode(ctx, memory.DefaultTenant, memory.EpisodeID(memory.DefaultTenant, other)); err != nil {
		t.Errorf("the idle session has no episode: %v", err)
	}
}

// With the server down, Codex's SessionStart and UserPromptSubmit exit 0
// within 2 s and inject nothing; a transcript that is a FIFO is refused at
// once (a reader of one waits for a writer for ever), with the reason.
func TestCodexHooksNeverHoldUpTheSession(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://%s/mcp", l.Addr())
	l.Close()
	t.Setenv("HINDSIGHT_CACHE", t.TempDir())
	fifo := filepath.Join(t.TempDir(), "rollout.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("why does the checkout test fail? ", 300<<10/33)
	for _, c := range []struct {
		agent   string
		payload map[string]any
		says    string
	}{
		{"codex", codexPayload(t, "session-start", map[string]any{"cwd": t.TempDir()}), "connect"},
		{"codex", codexPayload(t, "user-prompt-submit", map[string]any{"prompt": big}), "connect"},
		{"codex", codexPayload(t, "stop", map[string]any{"transcript_path": fifo}), "not a regular file (a named pipe)"},
		{"codex", codexPayload(t, "pre-compact", map[string]any{"transcript_path": fifo}), "not a regular file (a named pipe)"},
		{"claude-code", map[string]any{"session_id": "s", "transcript_path": fifo, "cwd": "/srv/app", "hook_event_name": "SessionEnd", "reason": "exit"}, "not a regular file (a named pipe)"},
		{"claude-code", map[string]any{"session_id": "s", "cwd": "/srv/app", "hook_event_name": "UserPromptSubmit", "prompt": big}, "connect"},
	} {
		args := []string{c.agent, "--url", url}
		if c.says != "connect" {
			args = append(args, "--wait") // read the transcript here, not in a detached process
		}
		start := time.Now()
		out, errOut := hook(t, c.payload, args...)
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("%s %v: took %v; the limit is 2 s", c.agent, c.payload["hook_event_name"], took)
		}
		if out != "" || !strings.Contains(errOut, c.says) {
			t.Errorf("%s %v: printed %q; stderr %q, want %q", c.agent, c.payload["hook_event_name"], out, errOut, c.says)
		}
	}
}

// --print-config prints a hooks.json that parses, with each event's
// command, and config.toml lines that parse, with the MCP server and
// the same hooks; the commands run even from a path with spaces.
func TestCodexPrintConfig(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my tools")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	bin := filepath.Join(dir, "hind sight")
	if err := os.Link(self, bin); err != nil {
		t.Skipf("cannot link the test binary: %v", err)
	}
	cmd := exec.Command(bin, "hook", "codex", "--print-config")
	cmd.Env = append(os.Environ(), "HINDSIGHT_TEST_ARGS=[]")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("print-config: %v", err)
	}
	text := string(out)
	i, j := strings.Index(text, "\n{"), strings.Index(text, "\n}\n")
	var file struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Type, Command string
				Timeout       int
			}
		}
	}
	if i < 0 || j < 0 {
		t.Fatalf("no hooks.json in:\n%s", text)
	}
	if err := json.Unmarshal([]byte(text[i:j+2]), &file); err != nil {
		t.Fatalf("hooks.json: %v\n%s", err, text[i:j+2])
	}
	var conf struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
		} `toml:"mcp_servers"`
		Hooks map[string][]struct {
			Hooks []struct {
				Type, Command string
				Timeout       int
			}
		}
	}
	if _, err := toml.Decode(text[j+3:], &conf); err != nil {
		t.Fatalf("config.toml lines: %v\n%s", err, text[j+3:])
	}
	if s := conf.MCPServers["hindsight"]; s.Command != bin || !slices.Equal(s.Args[:3], []string{"mcp", "--transport", "stdio"}) {
		t.Errorf("mcp_servers.hindsight: %+v", s)
	}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "Stop", "PreCompact"} {
		for src, hooks := range map[string]map[string][]struct {
			Hooks []struct {
				Type, Command string
				Timeout       int
			}
		}{"hooks.json": file.Hooks, "config.toml": conf.Hooks} {
			hs := hooks[ev]
			if len(hs) != 1 || len(hs[0].Hooks) != 1 || hs[0].Hooks[0].Type != "command" || hs[0].Hooks[0].Timeout <= 0 {
				t.Fatalf("%s %s: %+v", src, ev, hs)
			}
		}
	}
	// The command, as a shell runs it, is this binary's hook.
	command := file.Hooks["SessionStart"][0].Hooks[0].Command
	sh := exec.Command("sh", "-c", command+" --help")
	sh.Env = append(os.Environ(), "HINDSIGHT_TEST_ARGS=[]")
	help, _ := sh.CombinedOutput()
	if !strings.Contains(string(help), "Usage: hindsight hook codex") {
		t.Errorf("sh -c %q --help: %s", command, help)
	}
	if !strings.Contains(text, "# notify = [") {
		t.Errorf("no notify line for older Codex:\n%s", text)
	}
}
