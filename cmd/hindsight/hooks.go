package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/memory"
)

// Hooks connect coding agents to Hindsight without code from the user:
// the agent runs `hindsight hook <agent>` at its lifecycle events. A hook
// must never hold up or break the agent's session, so it always exits 0;
// what went wrong goes to stderr, which the agent logs.

// hookPayloadEnv carries a hook's payload to the detached process that
// hands the session over, so the hook itself returns at once; a hook that
// finds it set is that process.
const hookPayloadEnv = "HINDSIGHT_HOOK_PAYLOAD"

// claudeHook is what Claude Code writes on a hook's stdin.
type claudeHook struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	CWD            string `json:"cwd"`
	Event          string `json:"hook_event_name"`
	Source         string `json:"source"`  // SessionStart: startup, resume, clear, compact
	Prompt         string `json:"prompt"`  // UserPromptSubmit
	Trigger        string `json:"trigger"` // PreCompact: manual, auto
	Reason         string `json:"reason"`  // SessionEnd
}

func runHook(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprint(os.Stderr, `usage: hindsight hook claude-code [flags]   (reads the hook's JSON on stdin)
       hindsight hook codex [flags] NOTIFICATION   (Codex's notify program)

Run by a coding agent at its lifecycle events: a session that ends (or is
about to be compacted) is handed to Hindsight from the agent's own log,
and a session that starts, or a prompt, gets what Hindsight knows about
the project as context. See the README's "Claude Code" and "Codex"
sections; --print-config prints the setup.
`)
		return errUsage
	}
	switch args[0] {
	case "claude-code":
		return runClaudeHook(ctx, args[1:], out)
	case "codex":
		return runCodexHook(ctx, args[1:], out)
	}
	return fmt.Errorf("hook %q: no such agent; use claude-code or codex", args[0])
}

// hookFlags are the flags both agents' hooks take.
type hookFlags struct {
	clientFlags
	wait       bool
	background bool // this is the detached process (hookPayloadEnv is set)
	user       string
	maxTokens  int
	topK       int
}

func (h *hookFlags) register(fs *flag.FlagSet) {
	h.clientFlags.registerTimeout(fs, 2*time.Second, "give up on a recall after this long (the session goes on without it)")
	fs.BoolVar(&h.wait, "wait", false, "hand the session over in the foreground and wait until it is distilled (default: in the background)")
	fs.StringVar(&h.user, "user", envOr("HINDSIGHT_USER", osUser()), "whose sessions these are (recall returns their memories with the shared ones)")
	fs.IntVar(&h.maxTokens, "max-tokens", 600, "the budget of the context injected at session start and with each prompt")
	fs.IntVar(&h.topK, "top-k", 8, "at most this many memories injected")
}

func osUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

func runClaudeHook(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("hook claude-code", "[flags]", `
Claude Code's hook. It reads the hook's JSON payload on stdin and acts by
hook_event_name:
  SessionEnd, PreCompact   hand the session over from transcript_path, in
                           the background (PreCompact stores it; SessionEnd
                           distils it, whole, once)
  SessionStart             print what Hindsight knows about the project (cwd)
  UserPromptSubmit         print what it knows about the prompt, in the project
as hookSpecificOutput.additionalContext JSON, within --max-tokens. It prints
nothing when nothing is relevant, and exits 0 whatever happens, with the
cause on stderr. --print-config prints the settings.json block.`, "HINDSIGHT_URL", "HINDSIGHT_TOKEN", "HINDSIGHT_USER")
	var h hookFlags
	h.register(fs)
	printConfig := fs.Bool("print-config", false, "print the settings.json hooks block and the claude mcp add line, and exit")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *printConfig {
		return printClaudeConfig(out, h)
	}
	var raw []byte
	if p := os.Getenv(hookPayloadEnv); p != "" {
		raw, h.background = []byte(p), true
	} else {
		var err error
		if raw, err = io.ReadAll(io.LimitReader(os.Stdin, 1<<20)); err != nil {
			return hookFailed("read the hook payload", err)
		}
	}
	var p claudeHook
	if err := json.Unmarshal(raw, &p); err != nil {
		return hookFailed("read the hook payload", fmt.Errorf("not the JSON Claude Code sends: %v", err))
	}
	switch p.Event {
	case "SessionEnd", "PreCompact":
		if p.TranscriptPath == "" {
			return hookFailed(p.Event, errors.New("the payload has no transcript_path"))
		}
		if !h.wait && !h.background {
			return hookFailed(p.Event, detach(raw, append([]string{"hook", "claude-code"}, args...)))
		}
		t, err := readTranscriptFile(p.TranscriptPath)
		if err != nil {
			return hookFailed(p.Event, err)
		}
		if t.Project == "" {
			t.Project = p.CWD
		}
		h.timeout = 3 * time.Minute
		return hookFailed(p.Event, h.handOver(ctx, t, p.Event == "PreCompact"))
	case "SessionStart":
		// What was learned in the project, and its latest sessions.
		return hookFailed(p.Event, h.inject(ctx, out, p.Event, memory.ProjectEntity(p.CWD), p.CWD, 3))
	case "UserPromptSubmit":
		// What is relevant to the prompt, the project's first.
		return hookFailed(p.Event, h.inject(ctx, out, p.Event, p.Prompt, p.CWD, 0))
	}
	return nil // an event Hindsight has nothing to do at
}

// hookFailed logs a hook's error and swallows it: the agent's session goes
// on, whatever Hindsight's state.
func hookFailed(what string, err error) error {
	if err != nil {
		fmt.Fprintf(os.Stderr, "hindsight hook: %s: %v\n", what, err)
	}
	return nil
}

// detach starts this binary again, in its own session, to hand the
// session over, and returns without waiting: the agent's exit is never
// held up by a distillation. Its output goes to hooks.log in the cache.
func detach(payload []byte, args []string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), hookPayloadEnv+"="+string(payload))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if dir, err := cacheDir(); err == nil && os.MkdirAll(dir, 0o700) == nil {
		if f, err := os.OpenFile(filepath.Join(dir, "hooks.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
			defer f.Close()
			cmd.Stdout, cmd.Stderr = f, f
		}
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// handOver sends a session's transcript: kept open (stored, distilled
// later) or ended.
func (h *hookFlags) handOver(ctx context.Context, t memory.Transcript, keepOpen bool) error {
	res, err := h.endSession(ctx, t, endOptions{wait: h.wait && !keepOpen, keepOpen: keepOpen, user: h.user})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s hindsight: session %s (%s, %d events; left out %s): %s\n",
		time.Now().Format(time.RFC3339), t.SessionID, t.Format, len(t.Events), t.DroppedSummary(), res.Summary)
	return nil
}

// inject recalls for query in project, with its latest sessions when
// recent > 0, and prints that as the hook's additional context; nothing
// when nothing is relevant.
func (h *hookFlags) inject(ctx context.Context, out io.Writer, event, query, project string, recent int) error {
	if strings.TrimSpace(query) == "" {
		return nil
	}
	args := map[string]any{"query": query, "top_k": h.topK, "max_tokens": h.maxTokens}
	if project != "" {
		args["project"] = project
		if recent > 0 {
			args["recent_sessions"] = recent
		}
	}
	if h.user != "" {
		args["user_id"] = h.user
	}
	var res mcpserver.RecallOutput
	if _, err := h.callTool(ctx, mcpserver.ToolRecall, args, &res); err != nil {
		return err
	}
	if len(res.Results) == 0 && len(res.Sessions) == 0 {
		return nil
	}
	return json.NewEncoder(out).Encode(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName":     event,
		"additionalContext": res.Context,
	}})
}

// printClaudeConfig prints what to add to ~/.claude/settings.json, and the
// line that adds the MCP server.
func printClaudeConfig(out io.Writer, h hookFlags) error {
	self, err := os.Executable()
	if err != nil {
		self = "hindsight"
	}
	command := self + " hook claude-code"
	if h.url != "http://127.0.0.1:8765/mcp" {
		command += " --url " + h.url
	}
	entry := []map[string]any{{"hooks": []map[string]any{{"type": "command", "command": command, "timeout": 10}}}}
	block := map[string]any{"hooks": map[string]any{
		"SessionStart": entry, "UserPromptSubmit": entry, "PreCompact": entry, "SessionEnd": entry,
	}}
	fmt.Fprintln(out, "# Merge into ~/.claude/settings.json (every project) or .claude/settings.json (one project):")
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(block); err != nil {
		return err
	}
	fmt.Fprintln(out, "\n# And give Claude Code the memory tools (memory_recall, memory_store, ...):")
	line := "claude mcp add --transport http --scope user hindsight " + h.url
	if h.token != "" {
		line += ` --header "Authorization: Bearer $HINDSIGHT_TOKEN"`
	}
	fmt.Fprintln(out, line)
	return nil
}

// codexNotification is what Codex passes its notify program, as its last
// argument, when a turn completes.
type codexNotification struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread-id"`
	CWD      string `json:"cwd"`
}

func runCodexHook(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("hook codex", "[flags] NOTIFICATION", `
Codex's notify program. Codex runs it with a JSON notification as its last
argument when the agent finishes a turn; it finds the session's rollout
under --sessions and hands the session over in the background. Codex
never says a session ended, so each turn hands it over again: a session
that grew is distilled again, whole, and the same transcript twice is
distilled once. --print-config prints the config.toml line.`, "HINDSIGHT_URL", "HINDSIGHT_TOKEN", "HINDSIGHT_USER", "CODEX_HOME")
	var h hookFlags
	h.register(fs)
	sessions := fs.String("sessions", filepath.Join(codexHome(), "sessions"), "where Codex writes its rollouts")
	printConfig := fs.Bool("print-config", false, "print the ~/.codex/config.toml line, and exit")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *printConfig {
		self, err := os.Executable()
		if err != nil {
			self = "hindsight"
		}
		fmt.Fprintf(out, "# In ~/.codex/config.toml (top level, before any [table]):\nnotify = [%q, \"hook\", \"codex\"]\n\n# And give Codex the memory tools (stdio, forwarded to the running Hindsight):\n[mcp_servers.hindsight]\ncommand = %q\nargs = [\"mcp\", \"--transport\", \"stdio\", \"--url\", %q]\n", self, self, h.url)
		return nil
	}
	var raw string
	if p := os.Getenv(hookPayloadEnv); p != "" {
		raw, h.background = p, true
	} else if fs.NArg() > 0 {
		raw = fs.Arg(fs.NArg() - 1)
	} else {
		return hookFailed("codex notify", errors.New("no notification: Codex passes it as the last argument"))
	}
	var n codexNotification
	if err := json.Unmarshal([]byte(raw), &n); err != nil {
		return hookFailed("codex notify", fmt.Errorf("not the JSON Codex sends: %v", err))
	}
	if n.Type != "agent-turn-complete" || n.ThreadID == "" {
		return nil
	}
	if !h.wait && !h.background {
		rest := []string{"hook", "codex", "--sessions", *sessions}
		return hookFailed("codex notify", detach([]byte(raw), append(rest, flagArgs(args)...)))
	}
	path, err := findRollout(*sessions, n.ThreadID)
	if err != nil {
		return hookFailed("codex notify", err)
	}
	t, err := readTranscriptFile(path)
	if err != nil {
		return hookFailed("codex notify", err)
	}
	if t.Project == "" {
		t.Project = n.CWD
	}
	h.timeout = 3 * time.Minute
	return hookFailed("codex notify", h.handOver(ctx, t, false))
}

// flagArgs are args without the trailing positional notification.
func flagArgs(args []string) []string {
	if n := len(args); n > 0 && strings.HasPrefix(strings.TrimSpace(args[n-1]), "{") {
		return args[:n-1]
	}
	return args
}

func codexHome() string {
	if h := os.Getenv("CODEX_HOME"); h != "" {
		return h
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".codex")
}

// findRollout finds the rollout of a Codex session: its file name ends
// with the session's ID (rollout-<time>-<id>.jsonl).
func findRollout(dir, id string) (string, error) {
	var found string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), id+".jsonl") {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if found == "" {
		return "", fmt.Errorf("no rollout for session %s under %s", id, dir)
	}
	return found, nil
}
