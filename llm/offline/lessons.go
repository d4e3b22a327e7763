package offline

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/hindsight-memory/hindsight/lang/callargs"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/runes"
)

// params extracts a call's settings (see package callargs), in order of
// appearance, the last value winning for a repeated key. Of a call that
// ran something (a command, code, a query) they come from what ran: the
// flags, environment and privilege of a command, the keyword arguments
// and assignments of code, and an environment its arguments give; its
// other arguments say how the harness ran it or what it was for. Of a
// tool's call they are its arguments, other than descriptions, payloads
// (the text an edit writes) and what shapes its output (see settingOf).
func params(a *action) []callargs.Param {
	var out []callargs.Param
	var obj map[string]any
	if json.Unmarshal([]byte(a.args), &obj) == nil {
		if !executed(a) && writesText(obj) {
			return nil // an edit: what it wrote is no setting, nor where
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if s, ok := obj[k].(string); ok && s == a.primary {
				continue
			}
			if executed(a) && !envKeyRE.MatchString(k) {
				continue
			}
			for _, p := range jsonParams(nil, k, obj[k], 0) {
				if executed(a) {
					p.Key = strings.TrimPrefix(p.Key, k+".") // env.NAME is NAME
				}
				if settingOf(p.Key, p.Value) {
					out = callargs.Add(out, p)
				}
			}
		}
	}
	var found []callargs.Param
	switch a.kind {
	case primaryCode:
		found = callargs.Assignments(a.primary)
	case primaryCommand:
		found = commandParams(a.primary)
	}
	for _, p := range found {
		out = callargs.Add(out, p)
	}
	return out
}

// envKeyRE names the arguments that give a call's environment.
var envKeyRE = regexp.MustCompile(`(?i)^(env|environment|env_vars|envs)$`)

// jsonParams adds the settings of one JSON argument: a value as it is, an
// object's members under dotted keys ("headers.Authorization"), so that a
// change deep in a request's arguments is a changed setting too.
func jsonParams(out []callargs.Param, key string, v any, depth int) []callargs.Param {
	switch v := v.(type) {
	case string, float64, bool:
		return callargs.Add(out, callargs.Param{Key: key, Value: fmt.Sprint(v)})
	case map[string]any:
		if depth >= 3 {
			return out
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = jsonParams(out, key+"."+k, v[k], depth+1)
		}
	}
	return out
}

// commandParams are the settings of a command line: for each command of
// its pipelines and lists, its environment assignments (NAME=value before
// it, or exported before it), a privilege wrapper (sudo), and its flags,
// each scoped by the command's program so that `tail -n 8` and `head -n
// 1` are different settings. Commands that only view or filter output
// (tail, grep, jq, …) and the scene around the work (cd, echo) have no
// settings that matter: changing them changes what is shown, not whether
// the work succeeds.
func commandParams(line string) []callargs.Param {
	var out []callargs.Param
	for _, seg := range segments(shellFields(stripRedirects(line))) {
		words := seg
		if len(words) > 0 && words[0] == "export" {
			for _, w := range words[1:] {
				if isAssignment(w) {
					k, v, _ := strings.Cut(w, "=")
					out = callargs.Add(out, callargs.Param{Key: k, Value: v})
				}
			}
			continue
		}
		for len(words) > 0 && (isAssignment(words[0]) || wrappers[words[0]]) {
			if w := words[0]; w == "sudo" {
				out = callargs.Add(out, callargs.Param{Key: "sudo", Flag: true})
			} else if isAssignment(w) {
				k, v, _ := strings.Cut(w, "=")
				out = callargs.Add(out, callargs.Param{Key: k, Value: v})
			}
			words = words[1:]
		}
		if len(words) == 0 || sceneCommands[words[0]] || outputFilters[baseName(words[0])] {
			continue
		}
		prog := baseName(words[0])
		for _, p := range callargs.Flags(words) {
			p.Scope = prog
			out = callargs.Add(out, p)
		}
	}
	return out
}

// outputFilters only view, page or reshape what another command printed.
var outputFilters = wordSet(`tail head grep egrep fgrep rg less more wc sort uniq cut awk tr column tee jq yq fold nl cat`)

func baseName(w string) string {
	if i := strings.LastIndexByte(w, '/'); i >= 0 {
		return w[i+1:]
	}
	return w
}

// redirectRE matches shell redirections: 2>&1, >/dev/null, >> log.txt.
var redirectRE = regexp.MustCompile(`\s\d*>>?&?\s*\S+|\s<\s*\S+`)

func stripRedirects(s string) string { return redirectRE.ReplaceAllString(s, "") }

// shellFields splits a command line at spaces outside quotes.
func shellFields(s string) []string {
	var out []string
	var b strings.Builder
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
			b.WriteRune(r)
		case r == '\'' || r == '"':
			quote = r
			b.WriteRune(r)
		case r == ' ' || r == '\t' || r == '\n':
			if b.Len() > 0 {
				out = append(out, b.String())
				b.Reset()
			}
		default:
			b.WriteRune(r)
		}
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

// lesson is a failure→fix pair turned into a candidate.
type lesson struct {
	content, counter      string
	evidence              []int
	firstEvent, lastEvent int
	tool, program         string // the failed call's tool and, for commands, program
	target                string
	fix                   *action          // the call that fixed it, if any
	settings              []callargs.Param // what the fix changed
	worded                bool             // worded by the agent's insight
	score                 float64          // for ranking; 0 means the default for its kind
	needsWords            bool             // kept only if an insight words it
	redo                  *action          // an earlier call redone differently, which fixed it
	showFix               bool             // the fix is another call, told by its text
	fixWords              []string         // what the fix says that the failure did not
	about                 string           // what the calls said they were for (their descriptions), to match the agent's words
}

// findLessons pairs failed calls with the call that fixed them and renders
// each pair as a lesson. A fix is a later successful call similar to the
// failure (a corrected retry), chosen by token similarity so that an
// unrelated call on the same file (an encoding probe) is not taken for it.
// Several failures fixed by one call make one lesson.
func findLessons(acts []*action, ctx *sessionContext) []lesson {
	const window = 10      // a fix comes within this many calls
	const minSimilar = 0.3 // a fix shares this much with the failure
	fixOf := map[*action]*action{}
	for i, f := range acts {
		if !f.failed {
			continue
		}
		var best *action
		bestSim := 0.0
		for _, s := range acts[i+1 : min(len(acts), i+1+window)] {
			if s.failed || (s.tool != f.tool && !shareTarget(f, s)) {
				continue
			}
			if sim := similarity(f, s); sim >= minSimilar && sim > bestSim {
				best, bestSim = s, sim
			}
		}
		if best != nil {
			fixOf[f] = best
		}
	}
	// Group the failures by fix; acts are in transcript order, so every
	// group is too.
	failsOf := map[*action][]*action{}
	for _, f := range acts {
		if s := fixOf[f]; s != nil {
			failsOf[s] = append(failsOf[s], f)
		}
	}
	var out []lesson
	for _, s := range acts {
		if fails := failsOf[s]; len(fails) > 0 {
			if l, ok := renderLesson(fails, s, acts, ctx); ok {
				out = append(out, l)
			}
		}
	}
	// A failure on the way to a redo that fixed a later check is part of
	// that check's lesson, which names everything the redo changed.
	return slices.DeleteFunc(out, func(l lesson) bool {
		return slices.ContainsFunc(out, func(o lesson) bool { return o.redo != nil && o.redo == l.fix })
	})
}

func shareTarget(a, b *action) bool {
	ta, tb := targetOf(a), targetOf(b)
	return ta != "" && ta == tb
}

var (
	sqlTableRE = regexp.MustCompile(`(?i)\b(?:from|into|table|update|join)\s+([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)?)`)
)

// targetOf names what a call works on: a file, else a table, else a
// command's first positional argument.
func targetOf(a *action) string {
	if fs := fileNames(a.primary); len(fs) > 0 {
		return fs[0]
	}
	if a.kind == primaryQuery {
		if m := sqlTableRE.FindStringSubmatch(a.primary); m != nil {
			return m[1]
		}
	}
	if a.kind == primaryCommand {
		toks := shellFields(a.primary)
		for i := 2; i < len(toks); i++ {
			t := toks[i]
			prev := toks[i-1]
			if strings.ContainsAny(t, "|&;<>") {
				break // the target is the first command's
			}
			if strings.HasPrefix(t, "-") || strings.ContainsAny(t, "=/'\"") || (strings.HasPrefix(prev, "-") && !strings.HasPrefix(prev, "--")) {
				continue
			}
			return t
		}
	}
	return ""
}

// verb describes what a call does, in both languages ("reading", "读取").
type verb struct{ en, zh string }

var (
	callVerbs = []struct {
		re *regexp.Regexp
		v  verb
	}{
		{regexp.MustCompile(`\b(read_\w+|load\w*|open|fromfile)$`), verb{"reading", "读取"}},
		{regexp.MustCompile(`\b(to_\w+|write\w*|dump\w*|save|export\w*)$`), verb{"writing", "写入"}},
		{regexp.MustCompile(`\b(savefig|plot\w*|show|imsave|render\w*)$`), verb{"rendering", "生成图表"}},
		{regexp.MustCompile(`\b(insert\w*|upload\w*|copy\w*)$`), verb{"loading", "导入"}},
		{regexp.MustCompile(`\b(get|post|put|request|fetch|urlopen)$`), verb{"fetching", "请求"}},
	}
	sqlVerbs = []struct {
		re *regexp.Regexp
		v  verb
	}{
		{regexp.MustCompile(`(?i)^\s*(select|with|describe|show|explain)\b`), verb{"querying", "查询"}},
		{regexp.MustCompile(`(?i)^\s*(insert|copy)\b`), verb{"loading", "导入"}},
		{regexp.MustCompile(`(?i)^\s*(alter|create|drop|update|delete)\b`), verb{"changing", "修改"}},
	}
	letters, digits    = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789"
	callBeforeTargetRE = regexp.MustCompile(`([A-Za-z_][\w.]*)\(\s*['"]?$`)
)

// programOf is the program a command runs ("helm"), "" for other calls:
// the program of its main segment (see mainSegment).
func programOf(a *action) string {
	if a.kind != primaryCommand {
		return ""
	}
	segs := segments(shellFields(a.primary))
	if len(segs) == 0 {
		return ""
	}
	for _, t := range segs[mainSegment(segs)] {
		if isAssignment(t) || wrappers[t] {
			continue
		}
		if i := strings.LastIndexByte(t, '/'); i >= 0 {
			t = t[i+1:]
		}
		return t
	}
	return ""
}

// commandBase is a command's main segment without its flags: "alembic
// upgrade head"; up to the command's target when that comes a little
// later ("helm upgrade --install billing-api").
func commandBase(a *action) string {
	segs := segments(shellFields(stripRedirects(a.primary)))
	if len(segs) == 0 {
		return ""
	}
	words := segs[mainSegment(segs)]
	for len(words) > 0 && (isAssignment(words[0]) || wrappers[words[0]]) {
		words = words[1:]
	}
	if t := targetOf(a); t != "" {
		for i, w := range words[:min(len(words), 5)] {
			if w == t {
				return strings.Join(words[:i+1], " ")
			}
			if strings.ContainsAny(w, "|;&><") {
				break
			}
		}
	}
	var out []string
	for _, t := range words {
		if strings.HasPrefix(t, "-") || strings.ContainsAny(t, "|;&><") || len(out) == 4 {
			break
		}
		out = append(out, t)
	}
	return strings.Join(out, " ")
}

// subcommandOf is the first word after a command's program that is not a
// flag or a flag's value ("exec" in "kubectl -n shop exec …"), "" if none.
func subcommandOf(a *action) string {
	if a.kind != primaryCommand {
		return ""
	}
	segs := segments(shellFields(a.primary))
	if len(segs) == 0 {
		return ""
	}
	words := segs[mainSegment(segs)]
	for len(words) > 0 && (isAssignment(words[0]) || wrappers[words[0]]) {
		words = words[1:]
	}
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case strings.HasPrefix(w, "-"):
			if len(w) == 2 && i+1 < len(words) {
				i++ // a short flag's value
			}
			continue
		case strings.ContainsAny(w, "=/.'\""):
			continue
		}
		return w
	}
	return ""
}

// workOf is what a call does, without what only shows its output: for a
// command, its segments other than output filters, redirects removed.
func workOf(a *action) string {
	if a.kind != primaryCommand {
		return runes.OneLine(a.primary)
	}
	var parts []string
	for _, seg := range segments(shellFields(stripRedirects(a.primary))) {
		if len(seg) > 0 && outputFilters[baseName(seg[0])] {
			continue
		}
		parts = append(parts, strings.Join(seg, " "))
	}
	return strings.Join(parts, " | ")
}

// mainWork is the segment of a command line that does the work.
func mainWork(a *action) string {
	segs := segments(shellFields(stripRedirects(a.primary)))
	if len(segs) == 0 {
		return ""
	}
	return strings.Join(segs[mainSegment(segs)], " ")
}

// segments splits the words of a command line into the commands of its
// pipelines and lists (at |, ||, &&, ; and &).
func segments(words []string) [][]string {
	var out [][]string
	var cur []string
	for _, w := range words {
		switch w {
		case "|", "||", "&&", ";", "&":
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		if strings.HasSuffix(w, ";") && len(w) > 1 {
			cur = append(cur, strings.TrimSuffix(w, ";"))
			out = append(out, cur)
			cur = nil
			continue
		}
		cur = append(cur, w)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// Commands that set the scene for the one that does the work.
var (
	sceneCommands = wordSet(`cd pushd popd export set unset source . echo printf sleep true false wait trap ulimit umask alias`)
	wrappers      = wordSet(`sudo env nohup time timeout nice exec command builtin xargs`)
)

// mainSegment is the index of the segment that does the work: the first
// that is not a change of directory, an export, an echo or the like.
func mainSegment(segs [][]string) int {
	for i, seg := range segs {
		for _, t := range seg {
			if isAssignment(t) || wrappers[t] {
				continue
			}
			if !sceneCommands[t] {
				return i
			}
			break
		}
	}
	return 0
}

func isAssignment(w string) bool {
	k, _, ok := strings.Cut(w, "=")
	if !ok || k == "" || strings.HasPrefix(k, "-") {
		return false
	}
	for i, r := range k {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// verbOf says what a call does to its target.
func verbOf(a *action, target string) verb {
	switch a.kind {
	case primaryCode:
		if target != "" {
			if i := strings.Index(a.primary, target); i > 0 {
				// The target may be a path's last part: '/data/exports/x.parquet'.
				prefix := strings.TrimRight(strings.TrimRight(a.primary[:i], "/\\.~-_"+letters+digits), "'\"")
				if m := callBeforeTargetRE.FindStringSubmatch(prefix + "'"); m != nil {
					name := strings.ToLower(m[1])
					for _, cv := range callVerbs {
						if cv.re.MatchString(name) {
							return cv.v
						}
					}
				}
			}
		}
	case primaryCommand:
		if v := commandVerb(a.primary); v.en != "" {
			return v
		}
	case primaryQuery:
		for _, sv := range sqlVerbs {
			if sv.re.MatchString(a.primary) {
				return sv.v
			}
		}
	}
	return verb{"running " + a.tool, "执行 " + a.tool}
}

// notFoundRE is a lookup's report that what it looked for is not there.
var notFoundRE = regexp.MustCompile(`(?i)no such file|no matches found|not found|does not exist|cannot access|no files? match`)

// transientRE recognises failures that a plain retry may fix.
var transientRE = regexp.MustCompile(`(?i)timed? ?out|timeout|temporar|connection (reset|refused|aborted)|503|502|429|rate limit|too many requests|try again|超时|连接被重置|稍后重试`)

// setupVerbs name what prepares the ground for a call (install,
// configure, log in): a setup call's program, subcommand or settings say
// one ("pip install", "gcloud auth login", "export X=…", "mkdir -p …").
var setupVerbs = wordSet(`install config configure set setup export login auth authenticate enable init migrate add mount
	source activate mkdir chmod chown ln touch register use env`)

// setupCall reports whether a call prepares the ground for another.
func setupCall(a *action) bool {
	if a.kind == primaryCode {
		return false
	}
	for _, seg := range segments(shellFields(stripRedirects(a.primary))) {
		words := commandWords(seg)
		if len(words) == 0 {
			continue
		}
		if setupVerbs[words[0]] || len(seg) > len(words) && isAssignment(seg[0]) {
			return true
		}
		for _, w := range subcommands(words, 3) {
			if setupVerbs[strings.ToLower(w)] {
				return true
			}
		}
		for _, w := range words[1:] {
			if f := strings.ToLower(strings.TrimLeft(w, "-")); strings.HasPrefix(w, "--") && setupVerbs[f] {
				return true // upgrade --install
			}
		}
	}
	return sqlSetupRE.MatchString(a.primary)
}

// sqlSetupRE is a query that prepares the ground: creating, granting,
// setting, loading an extension.
var sqlSetupRE = regexp.MustCompile(`(?i)^\s*(create|grant|set|alter|install|load|attach|use)\b`)

// renderLesson writes the lesson of failures fixed by fix, in the
// session's language.
func renderLesson(fails []*action, fix *action, acts []*action, ctx *sessionContext) (lesson, bool) {
	first := fails[0]
	if first.kind == primaryCommand && readsOnly(first) && readsOnly(fix) && notFoundRE.MatchString(first.cause) {
		// A lookup that found nothing, then one that did: the agent
		// looked in the wrong place, which teaches nothing about the work.
		return lesson{}, false
	}
	target := targetOf(first)
	if target == "" {
		target = targetOf(fix)
	}
	v := verbOf(first, target)
	if v.en == "running "+first.tool {
		v = verbOf(fix, target)
	}
	cause := first.cause
	short := shortCause(cause)
	qual := ctx.qualifier(cause)
	program := programOf(first)
	// The subject of the lesson: "reading sales_2024.csv (Chinese
	// fields)", "building the app with docker"; in Chinese "用 docker 构建
	// billing-api". A command nothing is known about is named as it is.
	obj := strings.TrimSpace(target) // may be empty
	subjEN := v.en + spacedEN(obj)
	subjZH := v.zh + spaced(obj)
	switch {
	case strings.HasPrefix(v.en, "running ") && first.kind == primaryCommand:
		base := commandBase(first)
		v = verb{"running `" + base + "`", "执行 `" + base + "`"}
		subjEN, subjZH, obj = v.en, v.zh, ""
	case program != "" && program != obj:
		subjEN += " with " + program
		subjZH = "用 " + program + " " + subjZH
	}
	subjEN += qual.en
	subjZH += qual.zh

	var ev []int
	for _, f := range fails {
		ev = append(ev, f.events...)
		if f.userReported {
			ev = append(ev, f.complaint)
		}
	}

	// What changed between the failed calls and the fix?
	changed, added, oldVals := paramDiff(fix, fails)
	use := settingsOf(changed, added)
	// A retry that differs only in how its output is shown (`| tail -n
	// 20` for `| tail -n 8`, a redirect) is the same call again.
	sameCall := runes.OneLine(first.primary) == runes.OneLine(fix.primary) || workOf(first) == workOf(fix)

	l := lesson{tool: first.tool, program: program, target: cmp.Or(obj, target), settings: use}
	zh := ctx.lang == langZH
	switch {
	case sameCall:
		// Identical retry: the fix is what ran in between, or nothing.
		if orig, redo := redone(fails, fix, acts); redo != nil {
			ch, ad, _ := paramDiff(redo, []*action{orig})
			if set := settingsOf(ch, ad); len(set) > 0 && checkFix(orig, redo, set, "") == nil {
				ov := verbOf(orig, targetOf(orig))
				what := ov.en + spacedEN(targetOf(orig))
				whatZH := ov.zh + spaced(targetOf(orig))
				l.settings, l.redo = set, redo
				check := "`" + compactCode(first.primary, 60) + "`"
				if zh {
					l.content = fmt.Sprintf("%s时加上 %s；不加的话，之后的 %s 会报 %s。", whatZH, callargs.Join(set, "、"), check, short)
					l.counter = fmt.Sprintf("%s时没加 %s，之后 %s 失败：%s", whatZH, callargs.Join(set, "、"), check, cause)
				} else {
					pron := "it"
					if len(set) > 1 {
						pron = "them"
					}
					l.content = fmt.Sprintf("When %s, use %s; without %s, %s then failed with %s.", what, callargs.Join(set, " "), pron, check, short)
					l.counter = fmt.Sprintf("%s without %s made %s fail: %s", capitalize(what), callargs.Join(set, " "), check, cause)
				}
				ev = append(ev, orig.events...)
				ev = append(ev, redo.events...)
				break
			}
		}
		var setup []*action
		for _, a := range acts {
			if a == fix || a.failed || !between(a, fails[len(fails)-1], fix) || similarity(a, first) >= 0.3 {
				continue
			}
			if executed(a) && setupCall(a) && !readsOnly(a) && checkFix(first, a, nil, a.primary) == nil {
				setup = append(setup, a)
			}
		}
		if len(setup) > 2 {
			setup = setup[len(setup)-2:]
		}
		if len(setup) == 0 {
			if !transientRE.MatchString(cause) {
				// Fixed by something the calls do not show (an edit): only
				// the agent's own words can say what (see attachInsights).
				l.needsWords = true
				l.counter = failureLine(first)
				break
			}
			if zh {
				l.content = fmt.Sprintf("%s遇到 %s 时直接重试：同样的调用重试后成功。", subjZH, short)
				l.counter = fmt.Sprintf("第一次%s失败：%s", subjZH, cause)
			} else {
				l.content = fmt.Sprintf("When %s fails with %s, retry the same call; it succeeded on retry.", subjEN, short)
				l.counter = fmt.Sprintf("The first attempt at %s failed: %s", subjEN, cause)
			}
			break
		}
		var cmds []string
		for _, a := range setup {
			cmds = append(cmds, "`"+summarizeCall(a, 80)+"`")
			ev = append(ev, a.events...)
		}
		if zh {
			l.content = fmt.Sprintf("%s之前先执行 %s；否则会报 %s。", subjZH, strings.Join(cmds, "、"), short)
			l.counter = fmt.Sprintf("没有先执行 %s 就%s，失败：%s", strings.Join(cmds, "、"), subjZH, cause)
		} else {
			l.content = fmt.Sprintf("Before %s, run %s; without it, %s failed with %s.", subjEN, strings.Join(cmds, " and "), v.en, short)
			l.counter = fmt.Sprintf("%s before running %s failed: %s", capitalize(subjEN), strings.Join(cmds, " and "), cause)
		}
	case len(use) > 0 && (checkFix(first, fix, use, "") != nil || misattributed(first, fix, use, oldVals)):
		// What changed is no fix to offer (a tool's parameters, a path, a
		// fragment, a destructive flag): only the agent's words may say
		// what fixed it.
		if !executed(first) && !executed(fix) {
			return lesson{}, false
		}
		l.settings = nil
		l.needsWords = true
		l.counter = failureLine(first)
	case len(changed) > 0:
		if zh {
			l.content = fmt.Sprintf("%s时使用 %s；%s 会报 %s。", subjZH, callargs.Join(use, "、"), strings.Join(oldVals, "、"), short)
			l.counter = fmt.Sprintf("用 %s %s失败：%s", strings.Join(oldVals, " 或 "), subjZH, cause)
		} else {
			l.content = fmt.Sprintf("When %s, use %s; %s failed with %s.", subjEN, callargs.Join(use, " "), joinAnd(oldVals), short)
			l.counter = fmt.Sprintf("%s with %s failed: %s", capitalize(subjEN), strings.Join(oldVals, " or "), cause)
		}
	case len(added) > 0:
		if zh {
			l.content = fmt.Sprintf("%s时加上 %s；不加时%s。", subjZH, callargs.Join(use, "、"), failedWith(first, short, true))
			l.counter = fmt.Sprintf("不加 %s 时%s失败：%s", callargs.Join(use, "、"), subjZH, cause)
		} else {
			pron := "it"
			if len(use) > 1 {
				pron = "them"
			}
			l.content = fmt.Sprintf("When %s, use %s; without %s it %s.", subjEN, callargs.Join(use, " "), pron, failedWith(first, short, false))
			l.counter = fmt.Sprintf("%s without %s failed: %s", capitalize(subjEN), callargs.Join(use, " "), cause)
		}
	default:
		// No settings changed: compare the identifiers the calls use, when
		// they run the same program (a different program is another
		// approach, which only the agent's own words can explain).
		if programOf(first) != programOf(fix) || subcommandOf(first) != subcommandOf(fix) || first.tool != fix.tool ||
			!executed(first) || !executed(fix) || checkFix(first, fix, nil, fix.primary) != nil {
			return lesson{}, false
		}
		newT, oldT := tokenDiff(stripRedirects(fix.primary), stripRedirects(first.primary))
		mainNew, mainOld := tokenDiff(mainWork(fix), mainWork(first))
		switch {
		case len(newT)+len(oldT) > 0 && len(mainNew)+len(mainOld) == 0:
			return lesson{}, false // the change is in another command of the line than the one the lesson is about
		case len(newT)+len(oldT) > 0 && !slices.ContainsFunc(append(slices.Clone(newT), oldT...), func(t string) bool { return !looksLikePath(t) }):
			return lesson{}, false // only other files or directories: another target, not a fix
		case len(newT) == 0 || readsOnly(fix) && !readsOnly(first):
			// The same call, less of it, or a check that passed: what
			// fixed it is not in the calls; only the agent's words can say.
			l.needsWords = true
			l.counter = failureLine(first)
			ev = append(ev, fix.events...)
			slices.Sort(ev)
			l.evidence = slices.Compact(ev)
			l.firstEvent, l.lastEvent = l.evidence[0], l.evidence[len(l.evidence)-1]
			return l, true
		}
		l.showFix, l.fixWords = true, newT
		if len(newT) > 0 && len(newT) <= 3 && len(oldT) > 0 && len(oldT) <= 3 {
			if zh {
				l.content = fmt.Sprintf("%s时用 %s 而不是 %s；%s 会报 %s。", subjZH, strings.Join(newT, "、"), strings.Join(oldT, "、"), strings.Join(oldT, "、"), short)
				l.counter = fmt.Sprintf("用 %s %s失败：%s", strings.Join(oldT, "、"), subjZH, cause)
			} else {
				l.content = fmt.Sprintf("When %s, use %s instead of %s; %s failed with %s.", subjEN, joinAnd(newT), joinAnd(oldT), joinAnd(oldT), short)
				l.counter = fmt.Sprintf("%s with %s failed: %s", capitalize(subjEN), joinAnd(oldT), cause)
			}
			break
		}
		if zh {
			l.content = fmt.Sprintf("%s时改用 `%s`；`%s` 会报 %s。", subjZH, summarizeCall(fix, 100), summarizeCall(first, 80), short)
			l.counter = fmt.Sprintf("`%s` 失败：%s", summarizeCall(first, 100), cause)
		} else {
			l.content = fmt.Sprintf("When %s, use `%s`; `%s` failed with %s.", subjEN, summarizeCall(fix, 100), summarizeCall(first, 80), short)
			l.counter = fmt.Sprintf("`%s` failed: %s", summarizeCall(first, 100), cause)
		}
	}
	if zh {
		l.content, l.counter = zhSpace(l.content), zhSpace(l.counter)
	}
	ev = append(ev, fix.events...)
	slices.Sort(ev)
	l.evidence = slices.Compact(ev)
	l.firstEvent = l.evidence[0]
	l.lastEvent = l.evidence[len(l.evidence)-1]
	l.fix = fix
	l.about = strings.TrimSpace(first.about + " " + fix.about)
	return l, true
}

// paramDiff is what fix sets differently from the calls before it: the
// parameters it changed (with the old values, as written) and those it
// added.
func paramDiff(fix *action, before []*action) (changed, added []callargs.Param, oldVals []string) {
	for _, p := range fixParams(fix, before) {
		isNew := true
		for _, f := range before {
			for _, q := range params(f) {
				if q.Key != p.Key || q.Scope != p.Scope {
					continue
				}
				isNew = false
				if q.Value != p.Value {
					if !slices.Contains(changed, p) {
						changed = append(changed, p)
					}
					if s := q.String(); !slices.Contains(oldVals, s) {
						oldVals = append(oldVals, s)
					}
				}
			}
		}
		if isNew {
			added = append(added, p)
		}
	}
	return changed, added, oldVals
}

// fixParams are the settings of a fix to compare with the calls before
// it. When the fix is a command line that does more than they did
// ("… -- kill -3 1 && kubectl logs … --since=10s" for "… -- jstack 1"),
// only the segment that does their work counts: the rest collects or
// shows its output.
func fixParams(fix *action, before []*action) []callargs.Param {
	if fix.kind != primaryCommand || workSegments(fix) < 2 {
		return params(fix)
	}
	for _, b := range before {
		if b.kind != primaryCommand || workSegments(b) != 1 {
			return params(fix)
		}
	}
	segs := segments(shellFields(stripRedirects(fix.primary)))
	main := *fix
	main.primary = strings.Join(segs[mainSegment(segs)], " ")
	main.args = ""
	out := commandParams(main.primary)
	for _, p := range params(&action{kind: fix.kind, args: fix.args, primary: fix.primary}) {
		if p.Scope == "" {
			out = callargs.Add(out, p) // the environment its arguments give
		}
	}
	return out
}

// workSegments counts the segments of a command line that do work: not a
// change of directory, an export or an output filter.
func workSegments(a *action) int {
	n := 0
	for _, seg := range segments(shellFields(stripRedirects(a.primary))) {
		for _, t := range seg {
			if isAssignment(t) || wrappers[t] {
				continue
			}
			if !sceneCommands[t] && !outputFilters[baseName(t)] && baseName(t) != "sed" {
				n++
			}
			break
		}
	}
	return n
}

// settingsOf is what a lesson names of a fix: the changed parameters,
// then the added ones, at most three.
func settingsOf(changed, added []callargs.Param) []callargs.Param {
	use := append(slices.Clone(changed), added...)
	return use[:min(len(use), 3)]
}

// redone finds, for a check that failed and then passed unchanged (Spark
// could not read the Parquet file; the same query later could), the
// earlier call whose output it checked and that was redone differently in
// between: the redo is the fix. It returns the original and the redo, or
// nils.
func redone(fails []*action, fix *action, acts []*action) (orig, redo *action) {
	first, last := fails[0], fails[len(fails)-1]
	for _, r := range acts {
		if r.failed || !between(r, last, fix) {
			continue
		}
		for _, o := range acts {
			if o == first {
				break
			}
			if !o.failed && o.tool == r.tool && o.kind == r.kind && similarity(o, r) >= 0.5 && similarity(o, first) < 0.3 {
				orig, redo = o, r // the latest original, the latest redo
			}
		}
	}
	return orig, redo
}

// failedWith phrases how a failure showed: an error, or the user's words.
func failedWith(a *action, short string, zh bool) string {
	if a.userReported {
		if zh {
			return "出现问题：" + strings.TrimRight(a.cause, "。.")
		}
		return "went wrong: " + strings.TrimRight(a.cause, ".")
	}
	if zh {
		return "会报 " + short
	}
	return "failed with " + short
}

// zhSpace tidies spacing in generated Chinese: one space between Han and
// Latin text, none next to Chinese punctuation or between Han characters.
func zhSpace(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		if r == ' ' {
			var prev, next rune
			if i > 0 {
				prev = rs[i-1]
			}
			if i+1 < len(rs) {
				next = rs[i+1]
			}
			if prev == 0 || next == 0 || prev == ' ' || isZHPunct(prev) || isZHPunct(next) || (isHan(prev) && isHan(next)) {
				continue
			}
		}
		b.WriteRune(r)
		if i+1 < len(rs) {
			next := rs[i+1]
			if (isHan(r) && isLatinish(next)) || (isLatinish(r) && isHan(next)) {
				b.WriteRune(' ')
			}
		}
	}
	return b.String()
}

func isZHPunct(r rune) bool {
	return strings.ContainsRune("，。；：、！？（）「」“”", r)
}

func isLatinish(r rune) bool {
	return r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '`' || r == '\'' || r == '_')
}

func between(a, lo, hi *action) bool {
	return a.events[0] > lo.lastEvent() && a.lastEvent() < hi.events[0]
}

func spaced(s string) string {
	if s == "" {
		return ""
	}
	return " " + s + " "
}

func spacedEN(s string) string {
	if s == "" {
		return ""
	}
	return " " + s
}

func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	default:
		return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
	}
}

// tokenDiff returns the tokens only in a and only in b, in order of
// appearance, ignoring numbers and literals that differ only as values.
func tokenDiff(a, b string) (onlyA, onlyB []string) {
	ta, tb := tokens(a), tokens(b)
	inB, inA := map[string]bool{}, map[string]bool{}
	for _, t := range tb {
		inB[t] = true
	}
	for _, t := range ta {
		inA[t] = true
	}
	for _, t := range ta {
		if !inB[t] && !slices.Contains(onlyA, t) && !isNumber(t) {
			onlyA = append(onlyA, t)
		}
	}
	for _, t := range tb {
		if !inA[t] && !slices.Contains(onlyB, t) && !isNumber(t) {
			onlyB = append(onlyB, t)
		}
	}
	return onlyA, onlyB
}

func isNumber(s string) bool { return s != "" && strings.Trim(s, "0123456789.") == "" }

// failuresOf lists the episode's failures: failed calls, then complaints
// that could not be tied to a call.
func failuresOf(t memory.Transcript, acts []*action, complaints []complaint) []memory.Failure {
	var out []memory.Failure
	type item struct {
		at int
		f  memory.Failure
	}
	var items []item
	for _, a := range acts {
		if !a.failed {
			continue
		}
		at := a.lastEvent()
		if a.userReported {
			at = a.complaint
		}
		items = append(items, item{at, memory.Failure{Attempt: a.summary(), Cause: a.cause, EventID: eventID(t, at)}})
	}
	for _, c := range complaints {
		if c.action == nil {
			items = append(items, item{c.event, memory.Failure{Attempt: c.attempt, Cause: c.text, EventID: eventID(t, c.event)}})
		}
	}
	slices.SortStableFunc(items, func(a, b item) int { return a.at - b.at })
	for _, it := range items {
		out = append(out, it.f)
	}
	return out
}
