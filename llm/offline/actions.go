package offline

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/runes"
)

// action is one tool call with its outcome. A call and its result may be one
// event (Hindsight's format) or two (an assistant tool call followed by a
// tool message, as in OpenAI chats).
type action struct {
	callID  string // the agent's ID for the call, when it gave one
	refused bool   // the harness refused to run it: nothing ran
	about   string // what its descriptive arguments say it was for (never a fix)
	tool    string
	args    string // tool arguments as sent (JSON text, usually)
	primary string // the code, command or query inside args; else args
	kind    primaryKind
	result  string
	errText string // the error field, or the result when it reads as an error
	failed  bool
	cause   string // the most informative error line, or the user's complaint
	// userReported marks a call that looked fine but that the user said
	// did not work; complaint is the user's event.
	userReported bool
	complaint    int
	events       []int // indexes of the events of this call
}

// primaryKind says what sort of text an action's primary argument is.
type primaryKind int

const (
	primaryOther primaryKind = iota
	primaryCode
	primaryCommand
	primaryQuery
)

// primaryKeys are the argument names whose value is the substance of a
// call, in order of preference, with their kind.
var primaryKeys = []struct {
	key  string
	kind primaryKind
}{
	{"code", primaryCode}, {"script", primaryCode}, {"source", primaryCode},
	{"command", primaryCommand}, {"cmd", primaryCommand}, {"shell", primaryCommand},
	{"query", primaryQuery}, {"sql", primaryQuery}, {"statement", primaryQuery},
	{"input", primaryOther}, {"url", primaryOther}, {"path", primaryOther},
}

func (a *action) lastEvent() int { return a.events[len(a.events)-1] }

// buildActions pairs tool calls with their results, in transcript order:
// by call ID when the events carry one (several calls of one tool run at
// once, and their results come back in any order), else the oldest
// pending call of the result's tool.
func buildActions(events []memory.Event) []*action {
	var acts []*action
	var pending []*action // calls waiting for their result
	byID := map[string]*action{}
	for i, e := range events {
		isCall := e.ToolName != "" && e.Role != memory.RoleTool && e.ToolResult == "" && e.Error == ""
		switch {
		case isCall:
			a := newAction(e)
			a.events = []int{i}
			if e.CallID != "" {
				a.callID = e.CallID
				byID[e.CallID] = a
			}
			pending = append(pending, a)
			acts = append(acts, a)
		case e.CallID != "" && byID[e.CallID] != nil && e.ToolArgs == "":
			// A result of a call by its ID; a call that runs on (a
			// background task read again) may have several, the latest
			// saying how it ended.
			a := byID[e.CallID]
			if j := slices.Index(pending, a); j >= 0 {
				pending = slices.Delete(pending, j, j+1)
			}
			if e.Content == memory.RefusedByHarness {
				a.refused = true
				a.events = append(a.events, i)
				continue
			}
			if out := resultText(e); out != "" {
				a.result = strings.TrimSpace(a.result + "\n" + out)
			}
			a.errText = e.Error
			a.events = append(a.events, i)
		case e.Role == memory.RoleTool || e.ToolName != "" || e.ToolResult != "":
			// A result: attach it to the oldest pending call of the same
			// tool, or to the oldest pending call if the result names none.
			j := slices.IndexFunc(pending, func(p *action) bool { return e.ToolName == "" || p.tool == e.ToolName })
			if j >= 0 && e.ToolArgs == "" {
				a := pending[j]
				pending = slices.Delete(pending, j, j+1)
				a.result = resultText(e)
				a.errText = e.Error
				a.events = append(a.events, i)
				continue
			}
			a := newAction(e)
			a.result = resultText(e)
			a.errText = e.Error
			a.events = []int{i}
			acts = append(acts, a)
		case e.Error != "" && len(acts) > 0 && acts[len(acts)-1].lastEvent() == i-1:
			// An error reported right after a call belongs to it.
			a := acts[len(acts)-1]
			a.errText = strings.TrimSpace(a.errText + "\n" + e.Error)
			a.events = append(a.events, i)
		}
	}
	for _, a := range acts {
		classifyAction(a)
	}
	markRetries(acts)
	return acts
}

func resultText(e memory.Event) string {
	if e.ToolResult != "" {
		return e.ToolResult
	}
	if e.Role == memory.RoleTool {
		return e.Content
	}
	return ""
}

func newAction(e memory.Event) *action {
	a := &action{tool: e.ToolName, args: e.ToolArgs}
	if a.tool == "" {
		a.tool = "tool"
	}
	a.primary, a.kind = primaryOf(e.ToolArgs)
	var obj map[string]any
	if json.Unmarshal([]byte(e.ToolArgs), &obj) == nil {
		for k, v := range obj {
			if s, ok := v.(string); ok && describingKeyRE.MatchString(k) {
				a.about = strings.TrimSpace(a.about + " " + s)
			}
		}
	}
	if strings.TrimSpace(e.ToolArgs) == "" && e.Content != "" && e.Content != e.ToolResult && e.Content != e.Error {
		// The call written in the event's content rather than its
		// arguments ("bash: cd app && npm run build").
		a.primary, a.kind = e.Content, primaryOther
	}
	if a.kind == primaryOther && isShellTool(a.tool) {
		a.kind = primaryCommand
	}
	if a.kind == primaryOther && sqlStartRE.MatchString(a.primary) {
		a.kind = primaryQuery
	}
	return a
}

var sqlStartRE = regexp.MustCompile(`(?i)^\s*(select|insert|update|delete|with|create|alter|drop|describe|show|explain)\b`)

func isShellTool(name string) bool {
	switch strings.ToLower(name) {
	case "shell", "bash", "sh", "zsh", "terminal", "exec", "run_command", "run_shell", "cmd", "powershell":
		return true
	}
	return false
}

// primaryOf finds the substance of a call's arguments: the value of the
// first primary key, else the arguments themselves.
func primaryOf(args string) (string, primaryKind) {
	var obj map[string]any
	if json.Unmarshal([]byte(args), &obj) != nil {
		var s string
		if json.Unmarshal([]byte(args), &s) == nil {
			return s, primaryOther
		}
		return args, primaryOther
	}
	for _, pk := range primaryKeys {
		if v, ok := obj[pk.key].(string); ok && strings.TrimSpace(v) != "" {
			return v, pk.kind
		}
		if argv, ok := obj[pk.key].([]any); ok && pk.kind == primaryCommand {
			if line := commandLine(argv); line != "" {
				return line, pk.kind
			}
		}
	}
	return args, primaryOther
}

// commandLine reads a command given as an argument vector (Codex's
// ["bash", "-lc", "npm test"]): a shell's script, or the words joined.
func commandLine(argv []any) string {
	words := make([]string, 0, len(argv))
	for _, a := range argv {
		s, ok := a.(string)
		if !ok {
			return ""
		}
		words = append(words, s)
	}
	if len(words) == 3 && isShellTool(filepath.Base(words[0])) && (words[1] == "-c" || words[1] == "-lc") {
		return words[2]
	}
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t'\"$") {
			words[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(words, " ")
}

// Error recognition. The patterns look for errors where programs put them
// (the start of a line, a traceback's last line) so that output that
// merely mentions errors ("0 errors", "error_rate") is not a failure.
var (
	errorLineRE = regexp.MustCompile(`(?m)^\s*(Traceback \(most recent call last\)|(\w+\.)*\w*(Error|Exception)\b[:(]|Code: \d+\. DB::Exception|DB::Exception|ERROR\b|Error\b|error:|error\[|E\d{4}\b|FATAL|fatal:|panic:|FAILED\b|Failed to\b|npm ERR!|bash: .*: command not found|sh: .*: not found|Segmentation fault|Killed\b|Permission denied|No such file or directory|错误|报错|失败|异常)`)
	exitCodeRE  = regexp.MustCompile(`(?i)\b(exit(ed)? (code|status)|returned non-zero exit status) [1-9]\d*`)
	httpErrRE   = regexp.MustCompile(`(?i)^\s*(HTTP(/\d(\.\d)?)? [45]\d\d\b|[45]\d\d (bad request|unauthorized|forbidden|not found|internal server error|bad gateway|service unavailable|gateway timeout|too many requests))`)
)

// readerFailed reports whether a read-only call's output is its own
// complaint: its first or last line is the program's or the shell's error
// message, or an exit code.
func readerFailed(a *action) bool {
	var lines []string
	for _, l := range strings.Split(a.result, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return false
	}
	prog := programOf(a)
	for _, l := range []string{lines[0], lines[len(lines)-1]} {
		low := strings.ToLower(l)
		if prog != "" && strings.HasPrefix(low, strings.ToLower(prog)+":") || shellComplaintRE.MatchString(l) || exitCodeRE.MatchString(l) {
			return true
		}
	}
	return false
}

// shellComplaintRE is how a shell or a utility says a command could not
// run: "(eval):1: no matches found", "bash: x: command not found",
// "fatal: …", "No such file or directory".
var shellComplaintRE = regexp.MustCompile(`(?i)^(\(eval\)|bash|sh|zsh|fish):|^(fatal|error):|no such file or directory|permission denied|command not found|not a git repository`)

// exitZeroRE is a result that says its command exited 0.
var exitZeroRE = regexp.MustCompile(`(?im)^(?:process exited with code|exit code:?|exit status:?)\s*0\s*$`)

func looksLikeError(s string) bool {
	return errorLineRE.MatchString(s) || exitCodeRE.MatchString(s) || httpErrRE.MatchString(s)
}

func classifyAction(a *action) {
	switch {
	case a.refused:
		// Nothing ran: the harness's refusal says nothing about the work.
	case strings.TrimSpace(a.errText) != "":
		a.failed = true
	case exitZeroRE.MatchString(a.result):
		// It said it succeeded: error lines in its output are what it read.
	case readsOnly(a):
		// It printed what it read (a log, a test file): only its own
		// complaint, first or last, is a failure.
		if readerFailed(a) {
			a.failed = true
			a.errText = a.result
		}
	case looksLikeError(a.result):
		a.failed = true
		a.errText = a.result
	}
	if a.failed {
		a.cause = causeOf(a.errText)
	}
}

// markRetries treats a call repeated verbatim right after a call that gave
// no result at all as a retry of a failed attempt.
func markRetries(acts []*action) {
	for i := 0; i+1 < len(acts); i++ {
		a, b := acts[i], acts[i+1]
		if !a.failed && strings.TrimSpace(a.result) == "" && a.tool == b.tool && a.primary == b.primary && a.args != "" {
			a.failed = true
			a.cause = "no result; retried with the same arguments"
		}
	}
}

var (
	exceptionLineRE = regexp.MustCompile(`^(\w+\.)*\w+(Error|Exception|Warning)\b`)
	causeHintRE     = regexp.MustCompile(`(?i)error|exception|failed|failure|fatal|denied|not found|no such|timed out|timeout|refused|invalid|cannot|can't|unable|missing|错误|失败|报错|异常|超时`)
	dbNoiseRE       = regexp.MustCompile(`(?i)(\s+while processing query.*$|\s*\(version [^)]*\)\s*$)`)
	codePrefixRE    = regexp.MustCompile(`^Code: \d+\.\s*`)
)

// causeOf picks the most informative line of an error: a traceback's
// exception line, a database exception, an "Error:" line, a line that
// names a failure — in that order — trimmed of query echoes.
func causeOf(text string) string {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	pick := ""
	for i := len(lines) - 1; i >= 0 && pick == ""; i-- {
		if exceptionLineRE.MatchString(lines[i]) {
			pick = lines[i]
		}
	}
	for _, l := range lines {
		if pick != "" {
			break
		}
		if strings.Contains(l, "DB::Exception") || strings.HasPrefix(strings.ToLower(l), "error") || strings.HasPrefix(l, "fatal:") || strings.HasPrefix(l, "FATAL") {
			pick = l
		}
	}
	for _, l := range lines {
		if pick != "" {
			break
		}
		if !strings.HasPrefix(l, "Traceback") && !strings.HasPrefix(l, "File ") && causeHintRE.MatchString(l) {
			pick = l
		}
	}
	if pick == "" {
		pick = lines[len(lines)-1]
	}
	pick = dbNoiseRE.ReplaceAllString(pick, "")
	return runes.ClipWords(pick, 200)
}

// shortCause is the cause as a lesson names it: the exception class when
// there is a specific one (UnicodeDecodeError), else the line, shortened.
func shortCause(cause string) string {
	c := codePrefixRE.ReplaceAllString(cause, "")
	if m := exceptionLineRE.FindString(c); m != "" && m != "Error" && m != "Exception" {
		return m
	}
	return runes.ClipWords(c, 90)
}

// summary renders a call in one short line: "python: df = pd.read_csv(…)",
// "Edit main.go".
func (a *action) summary() string {
	if !executed(a) {
		return a.named(110)
	}
	return a.tool + ": " + summarizeCall(a, 110)
}

// named says which call it was, for people: what ran, quoted, or a
// tool's name and what it worked on, never the text it wrote.
func (a *action) named(n int) string {
	if executed(a) {
		return "`" + summarizeCall(a, n) + "`"
	}
	if t := targetOf(a); t != "" {
		return a.tool + " " + t
	}
	var obj map[string]any
	if json.Unmarshal([]byte(a.args), &obj) == nil && writesText(obj) {
		return a.tool
	}
	return "`" + compactCode(a.primary, n) + "`"
}

var skipLineRE = regexp.MustCompile(`^\s*(import\s|from\s+\S+\s+import\s|#|//|--\s)`)

// compactCode turns code or a command into one line of at most n runes:
// imports and comments dropped, lines joined; when too long, the first and
// last lines (the setup and, usually, the effect) are kept.
func compactCode(code string, n int) string {
	var lines []string
	for _, l := range strings.Split(code, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || skipLineRE.MatchString(t) {
			continue
		}
		lines = append(lines, runes.OneLine(t))
	}
	if len(lines) == 0 {
		return runes.ClipWords(runes.OneLine(code), n)
	}
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			if strings.HasSuffix(lines[i-1], ":") {
				b.WriteString(" ")
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(l)
	}
	if s := b.String(); len([]rune(s)) <= n || len(lines) == 1 {
		return runes.ClipWords(s, n)
	}
	half := (n - 3) / 2
	return runes.ClipWords(lines[0], half) + " … " + runes.ClipWords(lines[len(lines)-1], half)
}

// resultHint is a short view of a call's result for a step line.
func (a *action) resultHint() string {
	for _, l := range strings.Split(a.result, "\n") {
		if l = runes.OneLine(l); l != "" {
			return runes.ClipWords(l, 60)
		}
	}
	return ""
}

// tokenRE finds identifier-like tokens for comparing calls.
var tokenRE = regexp.MustCompile(`[\p{L}_][\p{L}\p{N}_]*(?:[.:/-][\p{L}\p{N}_]+)*|\d+(?:\.\d+)*`)

func tokens(s string) []string { return tokenRE.FindAllString(s, -1) }

// similarity is the Jaccard similarity of two calls' token sets; it tells a
// corrected retry from an unrelated call on the same file. Of two
// commands, the segments that do the work are compared too, so that a
// retry that also collects its output ("… -- kill -3 1 && kubectl logs …
// | sed …") is still a retry.
func similarity(a, b *action) float64 {
	sim := jaccard(tokenSet(a.primary), tokenSet(b.primary))
	if a.kind == primaryCommand && b.kind == primaryCommand {
		sa, sb := segments(shellFields(a.primary)), segments(shellFields(b.primary))
		if len(sa) > 1 || len(sb) > 1 {
			ma, mb := strings.Join(sa[mainSegment(sa)], " "), strings.Join(sb[mainSegment(sb)], " ")
			sim = max(sim, jaccard(tokenSet(ma), tokenSet(mb)))
		}
	}
	return sim
}

func jaccard(ta, tb map[string]bool) float64 {
	if len(ta) == 0 && len(tb) == 0 {
		return 0
	}
	inter := 0
	for t := range ta {
		if tb[t] {
			inter++
		}
	}
	return float64(inter) / float64(len(ta)+len(tb)-inter)
}

func tokenSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, t := range tokens(s) {
		m[t] = true
	}
	return m
}
