package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/runes"
)

// importFile is one session log found by import.
type importFile struct {
	path    string
	size    int64
	modTime time.Time
}

// importSummary counts what an import did.
type importSummary struct {
	Sessions, Episodes, Memories, Events int
	Skipped                              map[string][]string // reason → files
	// Harness counts what the agents' harness wrote, by kind: left out
	// (Dropped) or kept in another form (Mapped).
	Harness memory.Transcript
}

func runImport(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("import", "--from claude-code|codex [DIR] [flags]", `
Backfill past sessions from a coding agent's own logs: every Claude Code
session under DIR (default ~/.claude/projects), or every Codex rollout
(default ~/.codex/sessions), is handed to a running Hindsight and distilled,
keeping its own times. It is idempotent: a file imported twice is one
session, and a file that grew since is distilled again, its memories
merged with what the first import stored. A progress bar shows on a
terminal; --dry-run lists what would be imported.`, clientEnvs...)
	var c clientFlags
	c.register(fs)
	from := fs.String("from", "", "the agent whose logs to read: claude-code or codex")
	since := fs.String("since", "", "only logs written since this time or date (by file time)")
	dryRun := fs.Bool("dry-run", false, "list what would be imported, with sizes, and send nothing")
	parallel := fs.Int("parallel", 4, "sessions handed over at once")
	userID := fs.String("user", envOr("HINDSIGHT_USER", osUser()), "whose sessions these are")
	if err := parse(fs, args); err != nil {
		return err
	}
	var dir string
	switch *from {
	case "claude-code":
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".claude", "projects")
	case "codex":
		dir = filepath.Join(codexHome(), "sessions")
	default:
		fs.Usage()
		return fmt.Errorf("--from must be claude-code or codex, not %q", *from)
	}
	if fs.NArg() > 0 {
		dir = fs.Arg(0)
	}
	var after time.Time
	if *since != "" {
		loc, err := timeZone()
		if err != nil {
			return err
		}
		if after, err = memory.ParseTime(*since, loc); err != nil {
			return fmt.Errorf("--since: %v", err)
		}
	}
	files, err := findLogs(dir, *from, after)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		fmt.Fprintf(out, "no %s sessions under %s\n", *from, dir)
		return nil
	}
	if *dryRun {
		return listImport(out, files)
	}
	p := newProgress(os.Stderr, len(files))
	sum := importSummary{Skipped: map[string][]string{}, Harness: memory.Transcript{Dropped: map[string]int{}, Mapped: map[string]int{}}}
	var mu sync.Mutex
	work := make(chan importFile)
	var wg sync.WaitGroup
	for range max(1, *parallel) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				r := importOne(ctx, &c, f, *userID)
				mu.Lock()
				if r.skip != "" {
					sum.Skipped[r.skip] = append(sum.Skipped[r.skip], f.path)
				} else {
					sum.Sessions++
					sum.Episodes += r.episodes
					sum.Memories += r.memories
					sum.Events += len(r.t.Events)
					for k, v := range r.t.Dropped {
						sum.Harness.Dropped[k] += v
					}
					for k, v := range r.t.Mapped {
						sum.Harness.Mapped[k] += v
					}
				}
				p.step(f.path, r.skip, sum.Memories)
				mu.Unlock()
			}
		}()
	}
	for _, f := range files {
		if ctx.Err() != nil {
			break
		}
		work <- f
	}
	close(work)
	wg.Wait()
	p.done()
	skipped := 0
	for _, fs := range sum.Skipped {
		skipped += len(fs)
	}
	fmt.Fprintf(out, "imported %d sessions (%d events): %d episodes, %d memories; skipped %d\n", sum.Sessions, sum.Events, sum.Episodes, sum.Memories, skipped)
	if len(sum.Harness.Dropped) > 0 || len(sum.Harness.Mapped) > 0 {
		fmt.Fprintf(out, "  left out of the logs: %s\n", sum.Harness.DroppedSummary())
	}
	reasons := make([]string, 0, len(sum.Skipped))
	for r := range sum.Skipped {
		reasons = append(reasons, r)
	}
	slices.Sort(reasons)
	for _, r := range reasons {
		fmt.Fprintf(out, "  skipped %d: %s\n", len(sum.Skipped[r]), r)
		for _, f := range sum.Skipped[r] {
			fmt.Fprintf(out, "    %s\n", f)
		}
	}
	return ctx.Err()
}

// imported is what importOne did with one log: the transcript sent, and
// what came of it, or why it was skipped.
type imported struct {
	t                  memory.Transcript
	episodes, memories int
	skip               string
}

// importOne hands one log over and waits for its distillation. A log that
// cannot be read is skipped with the reason.
func importOne(ctx context.Context, c *clientFlags, f importFile, userID string) imported {
	t, err := readTranscriptFile(f.path)
	if err != nil {
		return imported{skip: reason(err, f.path)}
	}
	res, err := c.endSession(ctx, t, endOptions{wait: true, user: userID})
	if err != nil {
		return imported{skip: reason(err, f.path)}
	}
	r := imported{t: t, memories: len(res.Memories)}
	if res.EpisodeID != "" {
		r.episodes = 1
	}
	return r
}

// reason is an error as a skip reason, without the file's path (the
// summary lists the files under it).
func reason(err error, path string) string {
	s := strings.TrimPrefix(err.Error(), path+": ")
	if i := strings.Index(s, " of session "); i > 0 && strings.Contains(s, "holds no conversation") {
		return "holds no conversation"
	}
	return runes.ClipLine(s, 160)
}

// findLogs lists an agent's session logs under dir, oldest first. A
// Claude Code subagent's log is read with its parent session, not alone.
func findLogs(dir, from string, since time.Time) ([]importFile, error) {
	var out []importFile
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "subagents" && from == "claude-code" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".jsonl") || (from == "codex" && !strings.HasPrefix(d.Name(), "rollout-")) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !since.IsZero() && info.ModTime().Before(since) {
			return nil
		}
		out = append(out, importFile{path: p, size: info.Size(), modTime: info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	slices.SortFunc(out, func(a, b importFile) int { return a.modTime.Compare(b.modTime) })
	return out, nil
}

// listImport is --dry-run: each file, what it holds, and the total.
func listImport(out io.Writer, files []importFile) error {
	var total int64
	n := 0
	for _, f := range files {
		total += f.size
		t, err := readTranscriptFile(f.path)
		if err != nil {
			fmt.Fprintf(out, "skip    %8s  %s: %s\n", size(f.size), f.path, reason(err, f.path))
			continue
		}
		n++
		fmt.Fprintf(out, "import  %8s  %s  session %s, %d events, %s to %s (left out %s)\n", size(f.size), f.path, t.SessionID, len(t.Events),
			t.StartedAt.Format("2006-01-02 15:04"), t.EndedAt.Format("15:04"), t.DroppedSummary())
	}
	fmt.Fprintf(out, "would import %d of %d files, %s\n", n, len(files), size(total))
	return nil
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// progress shows an import's progress: a bar with counts and an ETA on a
// terminal, a line per session otherwise.
type progress struct {
	w        io.Writer
	tty      bool
	total, n int
	start    time.Time
}

func newProgress(w *os.File, total int) *progress {
	st, err := w.Stat()
	return &progress{w: w, tty: err == nil && st.Mode()&os.ModeCharDevice != 0, total: total, start: time.Now()}
}

func (p *progress) step(path, skip string, memories int) {
	p.n++
	if !p.tty {
		status := "ok"
		if skip != "" {
			status = "skipped: " + skip
		}
		fmt.Fprintf(p.w, "[%d/%d] %s: %s\n", p.n, p.total, path, status)
		return
	}
	const width = 30
	done := width * p.n / p.total
	eta := "?"
	if el := time.Since(p.start); p.n > 0 {
		eta = (el / time.Duration(p.n) * time.Duration(p.total-p.n)).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d sessions · %d memories · ETA %s   ", strings.Repeat("=", done), strings.Repeat(" ", width-done), p.n, p.total, memories, eta)
}

func (p *progress) done() {
	if p.tty {
		fmt.Fprintln(p.w)
	}
}
