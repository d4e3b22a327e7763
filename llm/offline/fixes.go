package offline

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/hindsight-memory/hindsight/lang/callargs"
	"github.com/hindsight-memory/hindsight/runes"
)

// Lessons only from what ran. A lesson's fix is what the agent executed
// (a command, code, a query, an argument vector) or the settings of it
// that changed; never what a call only described (a description, a
// title), the text an edit wrote, what shaped the output shown to the
// agent, a path on its own, a fragment cut out of a longer line, or a
// destructive command offered out of its context. A future agent acts on
// a lesson: whatever it names must be safe and complete to run.

// executed reports whether a call's substance is something that ran: a
// command, code or a query, rather than a tool's parameters (a file to
// read, a pattern to search, text to write).
func executed(a *action) bool {
	return a != nil && (a.kind == primaryCode || a.kind == primaryCommand || a.kind == primaryQuery)
}

// Words that name what a parameter is for, by the parameter's name. They
// are English nouns of what tools take, not the names of any one tool's
// parameters: "description", "old_string" and "max_output_tokens" are
// matched by their parts.
var (
	// describes: text about the call, for people.
	describingKeyRE = regexp.MustCompile(`(?i)(^|_|\b)(description|desc|title|summary|reason|justification|explanation|rationale|purpose|comment|note|label|prompt)s?($|_|\b)`)
	// payload: text a call writes or replaces (an edit, a patch, a file's
	// content, a message).
	payloadKeyRE = regexp.MustCompile(`(?i)(^|_)(old|new|original|replacement|updated)(_|$)|(^|_)(content|contents|text|patch|diff|edits?|file_text|insert|chars|new_source)($|_)`)
	// shaping: what decides how much of the output the agent sees, or
	// how the harness runs the call (in the background, in a sandbox).
	shapingKeyRE = regexp.MustCompile(`(?i)(^|_)(max|limit|offset|head|tail|page|lines|tokens|yield|output|mode|background|sandbox|permissions?|escalat\w*|tty|session_id|timeout\w*|ms|verbose|color)($|_)`)
	// pathKeyRE: a file, a directory or a pattern of them.
	pathKeyRE = regexp.MustCompile(`(?i)(^|_)(path|paths|file|files|filename|dir|directory|folder|pattern|glob|cwd|workdir|notebook)($|_)`)
)

// writesText reports whether a tool's call writes or replaces text (an
// edit, a patch, a file written whole): it has a payload argument. Such a
// call's other arguments (which line, which action) only place the text.
func writesText(obj map[string]any) bool {
	for k := range obj {
		if payloadKeyRE.MatchString(k) {
			return true
		}
	}
	return false
}

// settingOf reports whether a parameter of a call's JSON arguments is a
// setting a lesson may name: not a description, not a payload, not how
// the output is shown, not prose, not long or multi-line text.
func settingOf(key, value string) bool {
	k := strings.TrimLeft(key, "-")
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		k = k[i+1:]
	}
	switch {
	case describingKeyRE.MatchString(k), payloadKeyRE.MatchString(k), shapingKeyRE.MatchString(k):
		return false
	case strings.ContainsAny(value, "\n\r") || len([]rune(value)) > 120:
		return false
	case prose(value):
		return false
	}
	return true
}

// prose reports whether a value reads as a sentence for people rather
// than a setting: four words or more of letters only.
func prose(v string) bool {
	words := strings.Fields(v)
	if len(words) < 4 {
		return false
	}
	for _, w := range words {
		for _, r := range strings.Trim(w, ".,;:!?'\"()") {
			if !unicode.IsLetter(r) && r != '\'' && r != '-' {
				return false
			}
		}
	}
	return true
}

// pathSetting reports whether a setting names a file, a directory or a
// pattern of them: by its key, or by a value that is a path.
func pathSetting(p callargs.Param) bool {
	k := strings.TrimLeft(p.Key, "-")
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		k = k[i+1:]
	}
	return pathKeyRE.MatchString(k) || looksLikePath(strings.Trim(p.Value, `'"`))
}

var pathValueRE = regexp.MustCompile(`^(~|\.{1,2})?/?([\w.@*?{}\[\]-]+/)+[\w.@*?{}\[\]-]*$|^[\w@-]+\.[A-Za-z]{1,5}$`)

// looksLikePath reports whether a value is a path, or a glob of them.
func looksLikePath(v string) bool {
	if v == "" || strings.Contains(v, "://") || strings.ContainsAny(v, " \t") {
		return false
	}
	return pathValueRE.MatchString(v) || strings.ContainsAny(v, "*?") && strings.IndexFunc(v, unicode.IsLetter) >= 0
}

// Why a fix is refused; the validator's errors.
var (
	errNotExecuted = errors.New("the fix is a tool's parameters, not something that ran")
	errBarePath    = errors.New("the fix is only a path: another file is another target, not a fix")
	errFragment    = errors.New("the fix is a fragment of a longer line")
	errDestructive = errors.New("the fix is a destructive command out of its context")
	errNoSetting   = errors.New("the fix names nothing that can be set")
	errOtherCall   = errors.New("the settings belong to another command than the one that failed")
	errElsewhere   = errors.New("the failure was about something the fix stopped using, not about the settings it names")
)

// checkFix validates what a lesson offers as the fix of failed: the
// settings it names and, when it names a whole call (a call to run
// first, a call to use instead), that call. It returns why the fix must
// not be offered, or nil.
func checkFix(failed, fix *action, settings []callargs.Param, shownCall string) error {
	if !executed(failed) && !executed(fix) && shownCall == "" {
		// Neither call ran anything: a lesson could only name parameters
		// of a tool (which file, which pattern), which is a target.
		if len(settings) == 0 {
			return errNotExecuted
		}
		allPaths := true
		for _, p := range settings {
			if !pathSetting(p) {
				allPaths = false
			}
		}
		if allPaths {
			return errBarePath
		}
	}
	if len(settings) > 0 {
		allPaths := true
		for _, p := range settings {
			if !pathSetting(p) {
				allPaths = false
			}
		}
		if allPaths {
			return errBarePath
		}
	}
	if failed != nil && fix != nil && len(settings) > 0 && failed.kind == primaryCommand && fix.kind == primaryCommand &&
		programOf(failed) == programOf(fix) && subcommandOf(failed) != subcommandOf(fix) {
		return errOtherCall // git fsck's flags are no fix for git status
	}
	prog := ""
	if failed != nil {
		prog = programOf(failed)
	}
	for _, p := range settings {
		if fragment(p.Value) || fragment(p.Key) {
			return errFragment
		}
		if p.Scope != "" && p.Scope != prog && destructiveFlag(p.Scope, p) {
			return errDestructive
		}
	}
	if shownCall != "" {
		if fragment(shownCall) {
			return errFragment
		}
		if looksLikePath(strings.TrimSpace(shownCall)) {
			return errBarePath
		}
		if destructiveOutOfContext(shownCall, failed) {
			return errDestructive
		}
	}
	if len(settings) == 0 && shownCall == "" {
		return errNoSetting
	}
	return nil
}

// misattributed reports whether a settings lesson blames the wrong thing:
// the failure's message names something of the failed call (a file, a
// name) that the fix no longer uses, while the settings the lesson names
// (and the values they replaced) do not mention it. The change that
// mattered is then the one the settings do not show.
func misattributed(failed, fix *action, settings []callargs.Param, oldVals []string) bool {
	if failed == nil || fix == nil || failed.cause == "" {
		return false
	}
	named := strings.ToLower(callargs.Join(settings, " ") + " " + strings.Join(oldVals, " "))
	inFix := tokenSet(strings.ToLower(fix.primary))
	inFailed := tokenSet(strings.ToLower(failed.primary))
	for _, t := range tokens(strings.ToLower(failed.cause)) {
		if len(t) < 4 || isNumber(t) || hollowWords[t] || !inFailed[t] || inFix[t] {
			continue
		}
		if !strings.Contains(named, t) {
			return true
		}
	}
	return false
}

// fragment reports whether text is cut out of something longer: its
// quotes, brackets or command substitutions do not balance, or it starts
// or ends with an operator that joins it to what is missing.
func fragment(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	var stack []rune
	var quote rune
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0:
			if r == '\\' && quote == '"' {
				i++
			} else if r == quote {
				quote = 0
			}
		case r == '\\':
			i++
		case r == '\'' || r == '"' || r == '`':
			quote = r
		case r == '(' || r == '[' || r == '{':
			stack = append(stack, r)
		case r == ')' || r == ']' || r == '}':
			open := map[rune]rune{')': '(', ']': '[', '}': '{'}[r]
			if len(stack) == 0 || stack[len(stack)-1] != open {
				return true
			}
			stack = stack[:len(stack)-1]
		}
	}
	if quote != 0 || len(stack) > 0 {
		return true
	}
	for _, op := range []string{"|", "&&", "||", ";", ">", "<", ","} {
		if strings.HasPrefix(s, op) || strings.HasSuffix(s, op) && op != ";" {
			return true
		}
	}
	return false
}

// destructiveFlag reports whether a setting of program prog is what makes
// it destroy: rm's recursive or forced removal, git's forced or hard
// operations, kill's -9.
func destructiveFlag(prog string, p callargs.Param) bool {
	k := strings.TrimLeft(p.Key, "-")
	switch prog {
	case "rm", "rmdir", "shred", "unlink":
		return true
	case "git":
		return k == "force" || k == "f" || k == "hard" || strings.HasPrefix(k, "force")
	case "kill", "pkill", "killall":
		return true
	case "dd", "mkfs", "wipefs", "truncate":
		return true
	}
	return false
}

// destructiveRE finds commands that destroy what they touch.
var destructiveRE = regexp.MustCompile(`(?i)(^|[|;&(]\s*|\b(?:sudo|xargs)\s+)(rm\s+-\w*[rf]|rm\s+--(?:recursive|force)|git\s+(?:reset\s+--hard|clean\s+-\w*f|push\s+(?:-f|--force)|checkout\s+--\s+\.|branch\s+-D)|kill\s+-(?:9|KILL)|pkill\b|killall\b|mkfs|dd\s+.*\bof=|chmod\s+-R\s+0?777|chown\s+-R|docker\s+(?:system\s+prune|rm\s+-f|volume\s+rm)|kubectl\s+delete)|\b(?:drop\s+(?:table|database|schema)|truncate\s+table)\b|\bdelete\s+from\s+\w+\s*(?:;|$)`)

// broadTargetRE is a target a destructive command must never be offered
// for out of context: the root, a home, everything, a parent.
var broadTargetRE = regexp.MustCompile(`(^|\s)(/|~/?|\$HOME/?|\*|\.\.?/?|/\*|~/\*)(\s|$)|\s/(?:usr|etc|var|home|Users|opt)\b`)

// destructiveOutOfContext reports whether a call offered as a fix
// destroys something the failed call was not about: a destructive
// command whose program the failure did not run, or one aimed at a broad
// target (the root, a home directory, everything).
func destructiveOutOfContext(call string, failed *action) bool {
	if !destructiveRE.MatchString(call) {
		return false
	}
	if broadTargetRE.MatchString(call) {
		return true
	}
	if failed == nil || failed.kind != primaryCommand {
		return true
	}
	// The same destructive operation, corrected, is in context: a
	// `git push --force-with-lease` after a rejected `git push --force`.
	return !destructiveRE.MatchString(failed.primary)
}

// summarizeCall renders a call offered as a fix in one short line: a
// one-liner of many parts keeps the parts that do the work (not a change
// pause, an echo or what only shows the output), and an inline
// script of several statements (python -c '…; …') is named, not pasted.
func summarizeCall(a *action, n int) string {
	if a.kind != primaryCommand {
		return compactCode(a.primary, n)
	}
	words := shellFields(stripRedirects(a.primary))
	script := slices.ContainsFunc(words, inlineScript)
	if !script && len([]rune(runes.OneLine(a.primary))) <= n {
		return compactCode(a.primary, n)
	}
	// Rebuild the line a command at a time, each after the operator that
	// joined it, leaving out the quiet ones and, after the first, the
	// filters of its output.
	type part struct{ op, text string }
	var parts []part
	op := ""
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			cw := commandWords(cur)
			if len(parts) == 0 || len(cw) > 0 && !quietCommands[cw[0]] && !outputFilters[cw[0]] {
				parts = append(parts, part{op, strings.Join(cur, " ")})
			}
		}
		cur = nil
	}
	for _, w := range words {
		switch w {
		case "|", "||", "&&", ";", "&":
			flush()
			op = w
			continue
		}
		if inlineScript(w) {
			w = w[:1] + "…" + w[:1]
		}
		cur = append(cur, w)
	}
	flush()
	var b strings.Builder
	for i, p := range parts {
		if i == 3 {
			b.WriteString(" …")
			break
		}
		if i > 0 {
			b.WriteString(" " + p.op + " ")
		}
		b.WriteString(p.text)
	}
	return runes.Clip(runes.OneLine(b.String()), n)
}

// quietCommands pause or print: they do nothing a fix needs.
var quietCommands = wordSet(`sleep echo printf true false wait`)

// inlineScript reports whether a quoted word is a script of several
// statements pasted into a command line.
func inlineScript(w string) bool {
	if len(w) < 2 || w[0] != '\'' && w[0] != '"' {
		return false
	}
	body := w[1 : len(w)-1]
	return len([]rune(body)) > 60 && (strings.Count(body, ";") >= 2 || strings.Contains(body, "\n"))
}
