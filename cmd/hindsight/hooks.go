package main

import (
	"cmp"
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

	"github.com/hindsight-memory/hindsight/gitrepo"
	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/memory"
)

// Hooks connect coding agents to Hindsight without code from the user:
// the agent runs `hindsight hook <agent>` at its lifecycle events. A hook
// must never hold up or break the agent's session, so it always exits 0;
// what went wrong goes to stderr, which the agent logs.

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
       hindsight hook codex [flags]                (Codex's hooks: the JSON on stdin)
       hindsight hook codex [flags] NOTIFICATION   (older Codex's notify program)

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
	wait bool
	// payloadFile is where a hook that detached wrote its payload for the
	// detached process; set, this is that process.
	payloadFile string
	user        string
	maxTokens   int
	topK        int
}

// background reports whether this is a hook's detached process.
func (h *hookFlags) background() bool { return h.payloadFile != "" }

func (h *hookFlags) register(fs *flag.FlagSet) {
	h.clientFlags.registerTimeout(fs, 2*time.Second, "give up on a recall after this long (the session goes on without it)")
	fs.BoolVar(&h.wait, "wait", false, "hand the session over in the foreground and wait until it is distilled (default: in the background)")
	fs.StringVar(&h.user, "user", envOr("HINDSIGHT_USER", osUser()), "whose sessions these are (recall returns their memories with the shared ones)")
	fs.IntVar(&h.maxTokens, "max-tokens", 600, "the budget of the context injected at session start and with each prompt")
	fs.IntVar(&h.topK, "top-k", 8, "at most this many memories injected")
	fs.StringVar(&h.payloadFile, "payload-file", "", "read the payload from this file, and remove it (how a hook hands its payload to the process it detaches)")
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
	raw, err := readHookPayload(h.payloadFile)
	if err != nil {
		return hookFailed("claude-code", err)
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
		if !h.wait && !h.background() {
			return hookFailed(p.Event, h.detach(raw, "claude-code", args))
		}
		t, err := readTranscriptFile(p.TranscriptPath)
		if err != nil {
			return hookFailed(p.Event, err)
		}
		h.timeout = 3 * time.Minute
		return hookFailed(p.Event, h.handOver(ctx, t, p.CWD, p.Event == "PreCompact"))
	case "SessionStart":
		// What was learned in the project, and its latest sessions.
		return hookFailed(p.Event, h.inject(ctx, out, p.Event, "", p.CWD))
	case "UserPromptSubmit":
		// What is relevant to the prompt, the project's first.
		return hookFailed(p.Event, h.inject(ctx, out, p.Event, p.Prompt, p.CWD))
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

// detach starts this binary again, in its own session, as `hindsight hook
// AGENT ARGS --payload-file FILE`, to hand the session over, and returns
// without waiting: the agent's exit is never held up by a distillation.
// The payload goes through a file of its own (never the environment,
// which bounds its size); the process's output goes to hooks.log in the
// cache.
func (h *hookFlags) detach(payload []byte, agent string, args []string) error {
	_, err := h.start(payload, append([]string{"hook", agent}, args...), nil)
	return err
}

// start starts the detached process (see detach), with extra files
// (from fd 3) for it to inherit.
func (h *hookFlags) start(payload []byte, args []string, extra []*os.File) (*os.Process, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	file, err := writeHookPayload(payload)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, append(args, "--payload-file", file)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.ExtraFiles = extra
	if dir, err := cacheDir(); err == nil && os.MkdirAll(dir, 0o700) == nil {
		if f, err := os.OpenFile(filepath.Join(dir, "hooks.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
			defer f.Close()
			cmd.Stdout, cmd.Stderr = f, f
		}
	}
	if err := cmd.Start(); err != nil {
		os.Remove(file)
		return nil, err
	}
	p := cmd.Process
	return p, p.Release()
}

// handOver sends a session's transcript: kept open (stored, distilled
// later) or ended. cwd is the directory the agent works in, from the
// hook's payload: the project is its repository.
func (h *hookFlags) handOver(ctx context.Context, t memory.Transcript, cwd string, keepOpen bool) error {
	if cwd != "" && (t.Project == "" || strings.HasPrefix(memory.ProjectOf(t.Project, "").ID, memory.ProjectDirectory)) {
		t.Project = cwd // the directory at hand, rather than the one the log names
	}
	res, err := h.endSession(ctx, t, endOptions{wait: h.wait && !keepOpen, keepOpen: keepOpen, user: h.user})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s hindsight: session %s (%s, %d events; left out %s): %s\n",
		time.Now().Format(time.RFC3339), t.SessionID, t.Format, len(t.Events), t.DroppedSummary(), res.Summary)
	return nil
}

// inject prints, as the hook's additional context, what Hindsight knows
// that is relevant to query in the project of the directory cwd (its
// repository); with no query (a session's start), what was learned in
// the project and its latest sessions. It prints nothing when nothing is
// relevant. Everything, the repository's identity included, is done
// within the hook's --timeout.
func (h *hookFlags) inject(ctx context.Context, out io.Writer, event, query, cwd string) error {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	p := gitrepo.Project(ctx, cwd)
	recent := 0
	if query == "" {
		query, recent = p.Name, 3
	}
	if strings.TrimSpace(query) == "" {
		return nil
	}
	args := map[string]any{"query": query, "top_k": h.topK, "max_tokens": h.maxTokens}
	if !p.IsZero() {
		args["project"], args["project_name"] = cmp.Or(p.ID, p.Name), p.Name
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
	command := shellQuote(self) + " hook claude-code"
	if h.url != "http://127.0.0.1:8765/mcp" {
		command += " --url " + shellQuote(h.url)
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

// shellQuote quotes s for a POSIX shell, as the agents run hook commands
// through one: a path with spaces stays one word.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
