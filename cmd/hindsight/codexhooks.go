package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// codexHook is what Codex writes on a hook's stdin (its published
// schemas: codex-rs/hooks/schema/generated/*.command.input.schema.json).
// transcript_path is the session's rollout, or null.
type codexHook struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	CWD            string `json:"cwd"`
	Event          string `json:"hook_event_name"`
	Source         string `json:"source"` // SessionStart: startup, resume, clear, compact
	Prompt         string `json:"prompt"` // UserPromptSubmit
	TurnID         string `json:"turn_id"`
	StopHookActive bool   `json:"stop_hook_active"`
}

// codexNotification is what older Codex passes its notify program, as
// its last argument, when a turn completes.
type codexNotification struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread-id"`
	CWD      string `json:"cwd"`
}

// codexFlags are hook codex's own flags.
type codexFlags struct {
	hookFlags
	sessions string
	idle     time.Duration
	agentPID int
	readyFD  int
}

func runCodexHook(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("hook codex", "[flags] [NOTIFICATION]", `
Codex's hooks, with the hook's JSON payload on stdin, by hook_event_name:
  SessionStart       print what Hindsight knows about the project (cwd)
  UserPromptSubmit   print what it knows about the prompt, in the project
  Stop               the turn ended: hand the grown rollout over once the
                     session has been idle for --idle, or at once when
                     Codex exits; one process per session waits for that,
                     so a session of 50 quick turns is distilled once, not
                     50 times
  PreCompact         store the session (distilled, whole, later)
as hookSpecificOutput.additionalContext JSON, within --max-tokens, for the
first two. With a NOTIFICATION argument it is older Codex's notify program:
the turn's rollout (under --sessions) is handed over at once. It exits 0
whatever happens, with the cause on stderr (and, for what it does in the
background, in hooks.log in the cache). --print-config prints the
hooks.json file and the config.toml lines.`, "HINDSIGHT_URL", "HINDSIGHT_TOKEN", "HINDSIGHT_USER", "CODEX_HOME", "HINDSIGHT_CACHE")
	var h codexFlags
	h.register(fs)
	fs.StringVar(&h.sessions, "sessions", filepath.Join(codexHome(), "sessions"), "where Codex writes its rollouts")
	fs.DurationVar(&h.idle, "idle", 5*time.Minute, "Stop: hand a session over once it has been idle this long")
	fs.IntVar(&h.agentPID, "agent-pid", 0, "Stop: the Codex process, whose exit ends the session (default: the hook's first ancestor that is not a shell)")
	fs.IntVar(&h.readyFD, "ready-fd", 0, "Stop, detached: close this inherited descriptor once the session's lock is held (the Stop that started the process waits for it)")
	printConfig := fs.Bool("print-config", false, "print the hooks.json file and the ~/.codex/config.toml lines, and exit")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *printConfig {
		return printCodexConfig(out, h.hookFlags)
	}
	var raw []byte
	if !h.background() && fs.NArg() > 0 {
		raw = []byte(fs.Arg(fs.NArg() - 1))
	} else {
		var err error
		if raw, err = readHookPayload(h.payloadFile); err != nil {
			return hookFailed("codex", err)
		}
	}
	var p codexHook
	if err := json.Unmarshal(raw, &p); err != nil {
		return hookFailed("codex", fmt.Errorf("not the JSON Codex sends: %v", err))
	}
	if p.Event == "" {
		return h.notify(ctx, raw, args)
	}
	switch p.Event {
	case "SessionStart":
		return hookFailed(p.Event, h.inject(ctx, out, p.Event, "", p.CWD))
	case "UserPromptSubmit":
		return hookFailed(p.Event, h.inject(ctx, out, p.Event, p.Prompt, p.CWD))
	case "Stop":
		if h.wait {
			return hookFailed(p.Event, h.handOverRollout(ctx, p, false))
		}
		if h.background() {
			return hookFailed(p.Event, h.waitIdle(ctx, p))
		}
		return hookFailed(p.Event, h.stop(p, raw, args))
	case "PreCompact":
		if !h.wait && !h.background() {
			return hookFailed(p.Event, h.detach(raw, "codex", args))
		}
		return hookFailed(p.Event, h.handOverRollout(ctx, p, true))
	}
	return nil // an event Hindsight has nothing to do at
}

// notify is older Codex's notify program: a turn completed, and its
// session's rollout is handed over, whole, each time (a session that grew
// is distilled again; the same transcript twice is distilled once).
func (h *codexFlags) notify(ctx context.Context, raw []byte, args []string) error {
	var n codexNotification
	if err := json.Unmarshal(raw, &n); err != nil {
		return hookFailed("codex notify", fmt.Errorf("not the JSON Codex sends: %v", err))
	}
	if n.Type != "agent-turn-complete" || n.ThreadID == "" {
		return nil
	}
	if !h.wait && !h.background() {
		return hookFailed("codex notify", h.detach(raw, "codex", append([]string{"--sessions", h.sessions}, flagArgs(args)...)))
	}
	return hookFailed("codex notify", h.handOverRollout(ctx, codexHook{SessionID: n.ThreadID, CWD: n.CWD}, false))
}

// handOverRollout reads a session's rollout (transcript_path, else found
// under --sessions by the session's ID) and hands it over.
func (h *codexFlags) handOverRollout(ctx context.Context, p codexHook, keepOpen bool) error {
	path := p.TranscriptPath
	if path == "" {
		if p.SessionID == "" {
			return errors.New("the payload has neither transcript_path nor session_id")
		}
		var err error
		if path, err = findRollout(h.sessions, p.SessionID); err != nil {
			return err
		}
	}
	t, err := readTranscriptFile(path)
	if err != nil {
		return err
	}
	h.timeout = 3 * time.Minute
	return h.handOver(ctx, t, p.CWD, keepOpen)
}

// A Codex session has no end that hooks see: Stop comes at the end of
// every turn. So a Stop only notes the turn, in the session's state file
// (in the cache), and makes sure that one process, detached, waits for
// the session: it hands the rollout over once no turn has ended for
// --idle, or at once when the Codex process exits, then leaves; a later
// turn starts another. A session of 50 quick turns is distilled once (at
// its end), plus once for each pause of --idle it goes on after.

// codexTurns is a session's state file: what the last Stop said.
type codexTurns struct {
	SessionID      string    `json:"session_id"`
	TranscriptPath string    `json:"transcript_path,omitempty"`
	CWD            string    `json:"cwd,omitempty"`
	Turns          int       `json:"turns"`
	LastStop       time.Time `json:"last_stop"`
}

// codexStateFiles are a session's state file and the lock its waiting
// process holds (its process ID inside), in the cache.
func codexStateFiles(sessionID string) (state, lock string, err error) {
	dir, err := cacheDir()
	if err != nil {
		return "", "", err
	}
	dir = filepath.Join(dir, "codex")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	sum := sha256.Sum256([]byte(sessionID))
	key := hex.EncodeToString(sum[:12])
	return filepath.Join(dir, key+".json"), filepath.Join(dir, key+".lock"), nil
}

func readTurns(path string) (codexTurns, error) {
	r, err := readRegularFile(path, 1<<20, time.Second)
	if err != nil {
		return codexTurns{}, err
	}
	var s codexTurns
	if err := json.Unmarshal(r.data, &s); err != nil {
		return codexTurns{}, fmt.Errorf("%s: %v", path, err)
	}
	return s, nil
}

// stop is a Stop in the foreground: note the turn, and start the
// session's waiting process unless it runs. The process says it holds
// the lock (by closing a pipe) before stop returns, so that the next
// turn's Stop finds it.
func (h *codexFlags) stop(p codexHook, raw []byte, args []string) error {
	if err := memory.ValidateSessionID("codex Stop", p.SessionID); err != nil {
		return err
	}
	state, lock, err := codexStateFiles(p.SessionID)
	if err != nil {
		return err
	}
	s, _ := readTurns(state) // none yet, or unreadable: from this turn
	s.SessionID, s.Turns, s.LastStop = p.SessionID, s.Turns+1, time.Now().UTC()
	if p.TranscriptPath != "" {
		s.TranscriptPath = p.TranscriptPath
	}
	if p.CWD != "" {
		s.CWD = p.CWD
	}
	if err := writeFileAtomic(state, s); err != nil {
		return err
	}
	if held, err := lockHeld(lock); err != nil || held {
		return err
	}
	pid := h.agentPID
	if pid == 0 {
		pid = agentProcess()
	}
	ready, signal, err := os.Pipe()
	if err != nil {
		return err
	}
	defer ready.Close()
	rest := append(flagArgs(args), "--sessions", h.sessions, "--idle", h.idle.String(), "--agent-pid", strconv.Itoa(pid), "--ready-fd", "3")
	_, err = h.start(raw, append([]string{"hook", "codex"}, rest...), []*os.File{signal})
	signal.Close()
	if err != nil {
		return err
	}
	// EOF once the process holds the lock, or gave up; bounded all the
	// same, as a hook must return.
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, ready); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
	return nil
}

// waitIdle is the session's waiting process (see stop).
func (h *codexFlags) waitIdle(ctx context.Context, p codexHook) error {
	var ready *os.File
	if h.readyFD > 2 {
		ready = os.NewFile(uintptr(h.readyFD), "ready") // the pipe the starting Stop waits on
	}
	signalReady := func() {
		if ready != nil {
			ready.Close()
			ready = nil
		}
	}
	defer signalReady()
	state, lock, err := codexStateFiles(p.SessionID)
	if err != nil {
		return err
	}
	f, ok, err := tryLock(lock)
	if err != nil || !ok {
		return err // another process waits for the session
	}
	defer f.Close()
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	signalReady()
	exited := processExit(h.agentPID)
	h.wait = true // detached: wait for the distillation, and log what it learned
	handed := 0
	for {
		s, err := readTurns(state)
		if err != nil {
			return err
		}
		ended := false
		if wait := time.Until(s.LastStop.Add(h.idle)); wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-timer.C:
			case <-exited:
				ended = true
			}
			timer.Stop()
		}
		if now, err := readTurns(state); err == nil && now.Turns != s.Turns && !ended {
			continue // a turn ended meanwhile: idle from it
		}
		if s, err = readTurns(state); err != nil {
			return err
		}
		if s.Turns > handed {
			if err := h.handOverRollout(ctx, codexHook{SessionID: s.SessionID, TranscriptPath: s.TranscriptPath, CWD: s.CWD}, false); err != nil {
				fmt.Fprintf(os.Stderr, "hindsight hook: codex Stop: session %s: %v\n", s.SessionID, err)
			}
			handed = s.Turns
		}
		if ended {
			os.Remove(state)
			os.Remove(lock)
			return nil
		}
		// Idle: leave, so that a later turn starts another process. A
		// Stop that came as this one handed over found the lock held:
		// its turn is seen here, after the lock is let go, and this
		// process goes on waiting if it gets the lock back.
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		if s, err := readTurns(state); err != nil || s.Turns <= handed {
			return nil
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			return nil // another process took over
		}
	}
}

// tryLock takes the exclusive lock on path, without waiting.
func tryLock(path string) (*os.File, bool, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return f, true, nil
}

// lockHeld reports whether a process holds the lock on path.
func lockHeld(path string) (bool, error) {
	f, ok, err := tryLock(path)
	if err != nil || !ok {
		return !ok && err == nil, err
	}
	f.Close()
	return false, nil
}

// writeFileAtomic writes v as JSON to path through a file renamed over
// it: a reader sees the old state or the new, never half of one.
func writeFileAtomic(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// printCodexConfig prints the hooks file, the config.toml lines that give
// Codex the memory tools, the same hooks as config.toml tables, and the
// notify line for Codex before hooks.
func printCodexConfig(out io.Writer, h hookFlags) error {
	self, err := os.Executable()
	if err != nil {
		self = "hindsight"
	}
	command := shellQuote(self) + " hook codex"
	if h.url != "http://127.0.0.1:8765/mcp" {
		command += " --url " + shellQuote(h.url)
	}
	type handler struct {
		Type          string `json:"type"`
		Command       string `json:"command"`
		Timeout       int    `json:"timeout"`
		StatusMessage string `json:"statusMessage,omitempty"`
	}
	events := []struct {
		name   string
		status string
	}{
		{"SessionStart", "Recalling what Hindsight knows about the project"},
		{"UserPromptSubmit", ""},
		{"Stop", ""},
		{"PreCompact", ""},
	}
	hooks := map[string][]map[string][]handler{}
	for _, e := range events {
		hooks[e.name] = []map[string][]handler{{"hooks": {{Type: "command", Command: command, Timeout: 10, StatusMessage: e.status}}}}
	}
	fmt.Fprintln(out, "# Save as ~/.codex/hooks.json (or use the [hooks] tables further down in")
	fmt.Fprintln(out, "# config.toml instead; not both: Codex runs every hook it finds):")
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]any{"hooks": hooks}); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n# In ~/.codex/config.toml: the memory tools (stdio, forwarded to the running Hindsight).\n")
	fmt.Fprintf(out, "[mcp_servers.hindsight]\ncommand = %s\nargs = [%s, %s, %s, %s, %s]\n", tomlString(self),
		tomlString("mcp"), tomlString("--transport"), tomlString("stdio"), tomlString("--url"), tomlString(h.url))
	fmt.Fprintf(out, "\n# The hooks as config.toml tables, in place of hooks.json.\n")
	for _, e := range events {
		fmt.Fprintf(out, "[[hooks.%s]]\n[[hooks.%s.hooks]]\ntype = \"command\"\ncommand = %s\ntimeout = 10\n", e.name, e.name, tomlString(command))
		if e.status != "" {
			fmt.Fprintf(out, "statusMessage = %s\n", tomlString(e.status))
		}
	}
	fmt.Fprintf(out, "\n# Codex before hooks: instead of them, at the top of config.toml (before any table):\n# notify = [%s, \"hook\", \"codex\"]\n", tomlString(self))
	fmt.Fprintf(out, "# Codex that has hooks behind a feature flag: codex_hooks = true under [features].\n")
	return nil
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// flagArgs are args without a trailing positional notification.
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
