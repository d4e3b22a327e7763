package memory

import (
	"regexp"
	"strings"
)

// What a coding agent's harness writes into the conversation, told from
// what the person wrote. The records' structure says most of it (a
// record's type, isMeta, isCompactSummary, origin, toolUseResult); what
// arrives as plain text in a user record is recognised here by its
// markup, which the harness writes and people do not type.

var (
	// Tags the harness wraps text in, removed wherever they appear.
	reminderRE = regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`)
	hookTextRE = regexp.MustCompile(`(?s)<user-prompt-submit-hook>.*?</user-prompt-submit-hook>`)
	ideTextRE  = regexp.MustCompile(`(?s)<(ide_opened_file|ide_selection|ide_diagnostics)>.*?</(ide_opened_file|ide_selection|ide_diagnostics)>`)
	// A message that is the harness driving itself: a slash command, its
	// output, a shell escape (!cmd) and its output.
	commandRE = regexp.MustCompile(`(?s)^\s*<(command-name|command-message|command-args|command-contents|local-command-stdout|local-command-stderr|local-command-caveat|bash-input|bash-stdout|bash-stderr)>`)
	// A background task's completion notice.
	taskNoticeRE  = regexp.MustCompile(`(?s)^\s*<task-notification>`)
	interruptedRE = regexp.MustCompile(`^\[Request interrupted by user[^\]]*\]$`)
	// Claude Code's summary of a compacted conversation, when a record
	// does not say isCompactSummary (older logs).
	compactionRE = regexp.MustCompile(`^This session is being continued from a previous conversation`)
	// A line an agent's terminal interface draws: a tool call (⏺) or its
	// result (⎿), pasted by the person with what they then asked.
	pastedUIRE = regexp.MustCompile(`^\s*[⏺⎿✻]`)
	// Words people type to the harness, not about the work: a thinking
	// budget keyword, a mention that routes the message to a subagent.
	directiveRE = regexp.MustCompile(`(?i)\bultrathink\b[.,;:!]?\s*|@"[^"\n]{1,80} \(agent\)"\s*`)
	// Codex's preamble: the environment, AGENTS.md and instruction blocks.
	environmentRE = regexp.MustCompile(`(?s)^\s*(<environment_context>|<user_instructions>|<INSTRUCTIONS>|# AGENTS\.md instructions|<permissions instructions>|<user_shell_command>|<collaboration_mode>|<skills_instructions>|<plugins_instructions>|<apps_instructions>|<app-context>)`)
)

// builtinCommands are the slash commands of the agents' harnesses whose
// arguments set up the tool (what to keep when compacting, which model,
// which session to resume), never a request about the work. Any other
// command (a custom or plugin command, /review, /init) carries the
// person's request in its arguments.
var builtinCommands = map[string]bool{}

func init() {
	for _, c := range strings.Fields(`add-dir agents bashes bug clear compact config context cost doctor effort exit export fast
		feedback help hooks ide install-github-app keybindings login logout mcp memory migrate-installer model output-style
		permissions plugin plugins privacy-settings release-notes rename resume rewind sandbox skills stats status statusline
		tag tasks terminal-setup theme todos upgrade usage vim approvals diff mention new quit`) {
		builtinCommands[c] = true
	}
}

// isBuiltinCommand reports whether name ("/compact") is one of the
// harness's own commands.
func isBuiltinCommand(name string) bool {
	n := strings.TrimPrefix(strings.TrimSpace(name), "/")
	return builtinCommands[strings.ToLower(n)]
}

// userText cleans what a user record's text says: the harness's additions
// are removed (each counted in dropped), and what is left is the person's
// words. It returns "" with the reason when nothing of theirs is left, or
// a kind of harness text kept in another form (MapInterruption,
// MapCompaction) with the text.
func userText(s string, dropped map[string]int) (text, why string) {
	if commandRE.MatchString(s) {
		// A slash command's arguments are the person's words when the
		// command carries a request ("/review check the migrations too"),
		// never for the harness's own commands; its output and a bare
		// command are not words at all.
		name := tagText(s, "command-name")
		args := tagText(s, "command-args")
		if name == "" || args == "" || isBuiltinCommand(name) {
			return "", DropCommand
		}
		return args, ""
	}
	for _, r := range []struct {
		re     *regexp.Regexp
		reason string
	}{{reminderRE, DropReminder}, {hookTextRE, DropHook}, {ideTextRE, DropIDEContext}} {
		if n := len(r.re.FindAllStringIndex(s, -1)); n > 0 {
			dropped[r.reason] += n
			s = r.re.ReplaceAllString(s, "")
			if strings.TrimSpace(s) == "" {
				return "", r.reason
			}
		}
	}
	if strings.ContainsAny(s, "⏺⎿✻") {
		var kept []string
		pasted := false
		for _, line := range strings.Split(s, "\n") {
			switch {
			case pastedUIRE.MatchString(line):
				pasted = true
				continue
			case pasted && strings.HasPrefix(line, "  ") && strings.TrimSpace(line) != "":
				continue // the pasted block's indented continuation
			}
			pasted = false
			kept = append(kept, line)
		}
		if len(kept) < len(strings.Split(s, "\n")) {
			dropped[DropPastedUI]++
			s = strings.Join(kept, "\n")
			if strings.TrimSpace(s) == "" {
				return "", DropPastedUI
			}
		}
	}
	if directiveRE.MatchString(s) {
		s = directiveRE.ReplaceAllString(s, "")
	}
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", DropEmpty
	case interruptedRE.MatchString(s):
		return s, MapInterruption
	case compactionRE.MatchString(s):
		return s, MapCompaction
	}
	return s, ""
}

// toolText cleans a tool's output of the harness's additions (a system
// reminder appended to a file read), counting them.
func toolText(s string, dropped map[string]int) string {
	if !strings.Contains(s, "<system-reminder>") {
		return s
	}
	dropped[DropReminder] += len(reminderRE.FindAllStringIndex(s, -1))
	return strings.TrimRight(reminderRE.ReplaceAllString(s, ""), " \n")
}

// tagText is the text of the first <tag>…</tag> in s.
func tagText(s, tag string) string {
	_, rest, ok := strings.Cut(s, "<"+tag+">")
	if !ok {
		return ""
	}
	body, _, _ := strings.Cut(rest, "</"+tag+">")
	return strings.TrimSpace(body)
}

// harnessMarkupRE finds what only an agent's harness writes: its tags,
// its notices, its terminal's glyphs.
var harnessMarkupRE = regexp.MustCompile(`<(system-reminder|task-notification|task-id|output-file|command-name|command-message|command-args|command-contents|local-command-stdout|local-command-stderr|local-command-caveat|bash-input|bash-stdout|bash-stderr|tool_use_error|user-prompt-submit-hook|ide_opened_file|ide_selection|environment_context|user_instructions|persisted-output)>|\[Request interrupted by user|This session is being continued from a previous conversation|Caveat: The messages below were generated by the user while running local commands|[⏺⎿]`)

// HarnessMarkup returns the first piece of text in s that an agent's
// harness writes (a tag, a notice, a glyph of its terminal interface), or
// "" when there is none. No memory should hold any: the harness is never
// the person or the work.
func HarnessMarkup(s string) string {
	return harnessMarkupRE.FindString(s)
}
