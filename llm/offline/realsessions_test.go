package offline

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// keptLessons are the lessons a careful reader keeps from the real
// sessions, by file: a word each lesson of the session must have for one
// of its lessons. Other lessons may come and go; these must stay learned.
var keptLessons = map[string][]string{
	"claude-code/subagent.jsonl":                                                                          {"PLT"},
	"real/entireio-cli/9fd2fc39aa5f-0-full.jsonl":                                                         {"ShutdownTimeout"},
	"real/entireio-cli/d0161e0df1cb-0-full.jsonl":                                                         {"read-tree HEAD"},
	"real/entireio-cli/64267478c135-0-full.jsonl":                                                         {"systemMessage"},
	"real/entireio-entire-graph/94d9d019086f-0-full.jsonl":                                                {"--json"},
	"real/entireio-entire-graph/cc5b40fec726-0-full.jsonl":                                                {"SkipDir"},
	"real/codemie-ai-codemie-code/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl": {"OPENCODE_CONFIG_CONTENT"},
}

var (
	// What no memory may hold: a slash command, a tool's description, an
	// edit's payload (besides the harness markup memory.HarnessMarkup finds).
	slashCommandRE = regexp.MustCompile(`(?m)^/[a-z][\w:-]*(\s|$)`)
	notRunRE       = regexp.MustCompile(`\b(description|title|justification|old_string|new_string|old_str|new_str|max_output_tokens|yield_time_ms|sandbox_permissions)=|"(old_string|new_string|file_path)"\s*:`)
	// A fix a lesson names: "(fix: `…`)", "use `…`", "run `…`".
	shownFixRE = regexp.MustCompile("(?:fix: |修复：|use |run |改用 |执行 )`([^`]+)`")
)

// On every real session: no memory holds the harness's text, a slash
// command, a description or an edit's payload; every fix a lesson shows is
// something that ran; the episode's task is the person's request; a
// session yields at most 15 memories; and the lessons a careful reader
// keeps are learned.
func TestRealSessionsTeachFromThePersonAndTheWork(t *testing.T) {
	dir := os.Getenv("HINDSIGHT_TRANSCRIPTS")
	if dir == "" {
		t.Skip("HINDSIGHT_TRANSCRIPTS is not set (make test sets it when ../shared/bench/transcripts is beside the repository)")
	}
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		t.Fatalf("no session under %s", dir)
	}
	slices.Sort(files)
	seen := map[string]bool{}
	for _, f := range files {
		name, _ := filepath.Rel(dir, f)
		name = filepath.ToSlash(name)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := memory.ParseTranscript(data, nil)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if err := tr.Normalize(memory.DefaultTenant, time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)); err != nil {
				t.Fatal(err)
			}
			x, err := NewExtractor().Extract(context.Background(), tr)
			if err != nil {
				t.Fatal(err)
			}
			task := x.Episode.Task
			if strings.TrimSpace(task) == "" || memory.HarnessMarkup(task) != "" || slashCommandRE.MatchString(task) || strings.HasPrefix(task, "[") {
				t.Errorf("the episode's task %q is not the person's request", task)
			}
			if len(x.Candidates) > 15 {
				t.Errorf("%d memories, want at most 15", len(x.Candidates))
			}
			var lessons []string
			for _, c := range x.Candidates {
				text := c.Content + "\n" + c.CounterExample
				if m := memory.HarnessMarkup(text); m != "" {
					t.Errorf("a %s holds the harness's %q: %.200q", c.Kind, m, text)
				}
				if m := slashCommandRE.FindString(c.Content); m != "" {
					t.Errorf("a %s holds a slash command %q: %.200q", c.Kind, m, c.Content)
				}
				if m := notRunRE.FindString(text); m != "" {
					t.Errorf("a %s names what did not run (%q): %.300q", c.Kind, m, text)
				}
				if c.Kind != memory.KindLesson {
					continue
				}
				lessons = append(lessons, c.Content)
				for _, m := range shownFixRE.FindAllStringSubmatch(c.Content, -1) {
					if fix := strings.TrimSpace(m[1]); strings.HasPrefix(fix, "{") || looksLikePath(fix) || fragment(fix) {
						t.Errorf("a lesson shows %q as its fix, which is not something that ran: %.300q", fix, c.Content)
					}
				}
			}
			for _, want := range keptLessons[name] {
				seen[name] = true
				if !slices.ContainsFunc(lessons, func(l string) bool { return strings.Contains(l, want) }) {
					t.Errorf("no lesson says %q; lessons:\n%s", want, strings.Join(lessons, "\n"))
				}
			}
		})
	}
	for name := range keptLessons {
		if !seen[name] {
			t.Errorf("%s names kept lessons but is not under %s", name, dir)
		}
	}
}
