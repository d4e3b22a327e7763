package offline

import (
	"regexp"
	"strings"
)

// What a command does, told by general mechanisms rather than lists of
// programs: the shell's own read-only utilities, the verbs a command's
// subcommands are named with (get, list, build, deploy), its flags (a
// request with a body changes something; sed without -i only prints).

// shellReaders are the shell's utilities that only read and print.
var shellReaders = wordSet(`ls cat less more head tail grep egrep fgrep rg ag find fd du df ps top htop free uptime whoami id env printenv
	which whereis type stat file wc diff cmp date ping dig nslookup host traceroute tree pwd echo printf jq yq history dmesg
	journalctl sort uniq cut awk tr column nl md5sum sha1sum sha256sum shasum realpath readlink basename dirname test lsof
	netstat ss uname hostname nproc lscpu sed`)

// readVerbs name subcommands that look without changing: "kubectl get",
// "helm status", "git log", "aws s3 ls", "gh pr view".
// A check (lint, test, vet, verify) looks too: it says whether something
// holds and changes nothing.
var readVerbs = wordSet(`get list ls show describe status view inspect info logs log cat diff history version help search
	find explain top events whoami check can-i print lookup read query stat tree blame branch remote fetch ps images stats
	df du tail watch lint test tests vet verify validate typecheck audit doctor`)

// readVerbPrefixRE names read subcommands by their form: describe-instances,
// get-object, list-buckets, show-…, head-object.
var readVerbPrefixRE = regexp.MustCompile(`^(describe|get|list|show|head|read|view|lookup|search|inspect)[-_][a-z]{2,}$`)

// sqlReadRE starts a query that only reads.
var sqlReadRE = regexp.MustCompile(`(?i)^\s*(select|with|describe|desc|show|explain)\b`)

// checkVerbs name what checks whether something holds: a linter, a test
// run, a type check.
var checkVerbs = wordSet(`lint test tests vet verify validate typecheck check audit`)

// isCheck reports whether a command only checks (runs tests, a linter,
// a type check), changing nothing: by a subcommand's verb or the
// program's name (pytest, eslint).
func isCheck(a *action) bool {
	if a.kind != primaryCommand {
		return false
	}
	checked := false
	for _, seg := range segments(shellFields(stripRedirects(a.primary))) {
		words := commandWords(seg)
		if len(words) == 0 || sceneCommands[words[0]] {
			continue
		}
		switch {
		case checkSegment(words):
			checked = true
		case !segmentReads(words):
			return false
		}
	}
	return checked
}

func checkSegment(words []string) bool {
	if strings.Contains(words[0], "test") || strings.Contains(words[0], "lint") {
		return true
	}
	for _, w := range subcommands(words, 3) {
		if checkVerbs[strings.ToLower(w)] {
			return true
		}
	}
	return false
}

// readsOnly reports whether a call looks rather than changes: a read
// query, or a command each of whose working parts only reads.
func readsOnly(a *action) bool {
	switch a.kind {
	case primaryQuery:
		return sqlReadRE.MatchString(a.primary)
	case primaryCommand:
		segs := segments(shellFields(stripRedirects(a.primary)))
		worked := false
		for _, seg := range segs {
			words := commandWords(seg)
			if len(words) == 0 || sceneCommands[words[0]] {
				continue
			}
			worked = true
			if !segmentReads(words) {
				return false
			}
		}
		return worked
	}
	return false
}

// commandWords are a segment's words from its program on: environment
// assignments and wrappers (sudo, env, timeout) before it left out.
func commandWords(seg []string) []string {
	for len(seg) > 0 && (isAssignment(seg[0]) || wrappers[seg[0]]) {
		seg = seg[1:]
	}
	if len(seg) > 0 {
		seg = append([]string{baseName(seg[0])}, seg[1:]...)
	}
	return seg
}

// segmentReads reports whether one command of a line only reads.
func segmentReads(words []string) bool {
	prog := words[0]
	switch {
	case prog == "sed":
		return !hasFlag(words, "-i", "--in-place")
	case prog == "find":
		return !hasFlag(words, "-delete", "-exec", "-execdir", "-ok")
	case shellReaders[prog]:
		return true
	case fetchProgram(words):
		return !hasFlag(words, "-d", "--data", "--data-raw", "--data-binary", "-F", "--form", "-T", "--upload-file", "--post-data", "--post-file") &&
			!changingMethod(words)
	}
	if sqlReadRE.MatchString(inlineSQL(words)) {
		return true
	}
	if strings.Contains(prog, "test") || strings.Contains(prog, "lint") {
		return true // a test runner or a linter, by its name
	}
	for _, w := range subcommands(words, 3) {
		if readVerbs[strings.ToLower(w)] || readVerbPrefixRE.MatchString(strings.ToLower(w)) {
			return true
		}
	}
	return false
}

// subcommands are the first n words after a program that are not flags,
// flag values, assignments or paths.
func subcommands(words []string, n int) []string {
	var out []string
	for i := 1; i < len(words) && len(out) < n; i++ {
		w := words[i]
		switch {
		case strings.HasPrefix(w, "-"):
			if len(w) == 2 && i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") {
				i++ // a short flag's value
			}
			continue
		case strings.ContainsAny(w, "=/.'\"$`{}()[]<>|&;*"):
			continue
		}
		out = append(out, w)
	}
	return out
}

func hasFlag(words []string, flags ...string) bool {
	for _, w := range words[1:] {
		k, _, _ := strings.Cut(w, "=")
		for _, f := range flags {
			if k == f {
				return true
			}
		}
	}
	return false
}

// fetchProgram reports whether a command fetches a URL it is given as an
// argument (curl, wget, http): its first argument that is not a flag is a
// URL.
func fetchProgram(words []string) bool {
	for _, w := range words[1:] {
		if strings.HasPrefix(w, "-") {
			continue
		}
		return urlRE.MatchString(strings.Trim(w, `'"`))
	}
	return false
}

var urlRE = regexp.MustCompile(`^https?://`)

// changingMethod reports whether a fetch names a method that changes
// something (-X POST).
func changingMethod(words []string) bool {
	for i, w := range words {
		v := ""
		switch {
		case (w == "-X" || w == "--request" || w == "--method") && i+1 < len(words):
			v = words[i+1]
		case strings.HasPrefix(w, "--request="), strings.HasPrefix(w, "--method="):
			_, v, _ = strings.Cut(w, "=")
		case strings.HasPrefix(w, "-X") && len(w) > 2:
			v = w[2:]
		}
		if v != "" && !strings.EqualFold(strings.Trim(v, `'"`), "GET") && !strings.EqualFold(strings.Trim(v, `'"`), "HEAD") {
			return true
		}
	}
	return false
}

// inlineSQL is the SQL a database client runs from its arguments (-c,
// -e, -q, --query, --execute), or "".
func inlineSQL(words []string) string {
	for i, w := range words {
		k, v, has := strings.Cut(w, "=")
		switch k {
		case "-c", "-e", "-q", "--command", "--query", "--execute":
			if has {
				return strings.Trim(v, `'"`)
			}
			if i+1 < len(words) {
				return strings.Trim(words[i+1], `'"`)
			}
		}
	}
	return ""
}

// gerunds turn the verbs commands and subcommands are named with into
// what a lesson says the call was doing: "npm run build" and "docker
// build" are building, "cargo add" and "brew install" installing. Verbs
// whose object varies too much to name (upgrade a release, a schema or
// the packages; apply a plan or a manifest) are not here: such a call is
// named as it was written ("running `alembic upgrade head`").
var gerunds = map[string]verb{
	"build": {"building", "构建"}, "make": {"building", "构建"}, "compile": {"building", "构建"}, "package": {"building", "构建"},
	"install": {"installing", "安装"}, "add": {"installing", "安装"}, "restore": {"installing", "安装"},
	"deploy": {"deploying", "部署"}, "publish": {"publishing", "发布"},
	"push": {"pushing", "推送"}, "pull": {"fetching", "拉取"}, "clone": {"fetching", "拉取"}, "download": {"fetching", "下载"},
	"test": {"testing", "测试"}, "migrate": {"migrating", "迁移"}, "run": {"", ""}, "exec": {"", ""},
}

// commandVerb says what a command does: by the verb of its program or
// subcommands, by the SQL it runs, by the URL it fetches, by a test
// runner's name ("pytest", "vitest"); else the zero verb.
func commandVerb(cmd string) verb {
	segs := segments(shellFields(stripRedirects(cmd)))
	if len(segs) == 0 {
		return verb{}
	}
	words := commandWords(segs[mainSegment(segs)])
	if len(words) == 0 {
		return verb{}
	}
	if sql := inlineSQL(words); sql != "" && sqlStartRE.MatchString(sql) {
		return verb{"querying", "查询"}
	}
	if fetchProgram(words) {
		return verb{"fetching", "请求"}
	}
	for _, w := range append([]string{words[0]}, subcommands(words, 3)...) {
		w = strings.ToLower(w)
		if v, ok := gerunds[w]; ok {
			if v.en == "" {
				continue // "run", "exec": the verb is what follows
			}
			return v
		}
		if strings.HasSuffix(w, "test") || strings.HasPrefix(w, "test") {
			return verb{"testing", "测试"}
		}
	}
	return verb{}
}
