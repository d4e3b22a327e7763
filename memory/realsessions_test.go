package memory

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// realSessionFiles lists the real agent logs under $HINDSIGHT_TRANSCRIPTS
// (make test sets it when ../shared/bench/transcripts is beside the
// repository), or skips the test with the reason.
func realSessionFiles(t *testing.T) []string {
	t.Helper()
	dir := os.Getenv("HINDSIGHT_TRANSCRIPTS")
	if dir == "" {
		t.Skip("HINDSIGHT_TRANSCRIPTS is not set (make test sets it when ../shared/bench/transcripts is beside the repository)")
	}
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no .jsonl session under %s", dir)
	}
	slices.Sort(files)
	return files
}

// userHarnessRE finds the harness's text where only a person's words may
// be: besides its markup, a slash command.
var userHarnessRE = regexp.MustCompile(`(?m)^/[a-z][\w:-]*(\s|$)`)

// Every real session is accepted whatever records it opens with; the
// user's events hold only what the person wrote; every result carries the
// ID of a call in the log; and what the harness wrote is counted.
func TestRealSessionsAreReadAsTheAgentsWriteThem(t *testing.T) {
	total := map[string]int{}
	mapped := map[string]int{}
	for _, f := range realSessionFiles(t) {
		name, _ := filepath.Rel(os.Getenv("HINDSIGHT_TRANSCRIPTS"), f)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := ParseTranscript(data, nil)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tr.Format != FormatClaudeCode && tr.Format != FormatCodex {
				t.Errorf("read as %s, not as the agent's log", tr.Format)
			}
			calls := map[string]bool{}
			for _, e := range tr.Events {
				if e.Role != RoleTool && e.ToolName != "" && e.CallID != "" {
					calls[e.CallID] = true
				}
			}
			users := 0
			for i, e := range tr.Events {
				switch {
				case e.Role == RoleUser:
					users++
					if m := HarnessMarkup(e.Content); m != "" {
						t.Errorf("user event %d holds the harness's %q: %.120q", i, m, e.Content)
					}
					if m := userHarnessRE.FindString(e.Content); m != "" {
						t.Errorf("user event %d holds a slash command %q: %.120q", i, m, e.Content)
					}
				case e.Role == RoleTool && e.CallID != "" && !calls[e.CallID] && !strings.HasPrefix(e.CallID, "task-"):
					t.Errorf("result %d answers call %s, which the log does not hold", i, e.CallID)
				}
			}
			if users == 0 && !strings.Contains(name, "agent-") {
				t.Errorf("no user event in %d events", len(tr.Events))
			}
			if err := tr.Normalize(DefaultTenant, time.Now()); err != nil {
				t.Errorf("normalize: %v", err)
			}
			for k, v := range tr.Dropped {
				total[k] += v
			}
			for k, v := range tr.Mapped {
				mapped[k] += v
			}
		})
	}
	t.Logf("left out: %s", droppedSummary(total))
	t.Logf("kept as context or results: %s", droppedSummary(mapped))
}
