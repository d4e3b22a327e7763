package offline

import (
	"errors"
	"strings"
	"testing"

	"github.com/hindsight-memory/hindsight/lang/callargs"
	"github.com/hindsight-memory/hindsight/memory"
)

// act builds an action the way buildActions does, from a call's tool and
// arguments.
func act(tool, args string) *action {
	a := newAction(memory.Event{Role: memory.RoleAssistant, ToolName: tool, ToolArgs: args})
	a.events = []int{0}
	return a
}

// Which arguments of a call a lesson may name as settings: only what ran
// (a command's flags and environment, code's keyword arguments), never a
// description, a title, an edit's payload, what shapes the output shown
// to the agent, or prose.
func TestSettingsComeFromWhatRan(t *testing.T) {
	cases := []struct {
		name, tool, args string
		want             string // the settings, joined
	}{
		{"a command's flags; its description and timeout are not settings", "Bash",
			`{"command":"helm upgrade --install api ./chart --wait","description":"Deploy with a wait","timeout":600000}`, "--install --wait"},
		{"an environment assignment before the command", "Bash",
			`{"command":"CGO_ENABLED=1 go test ./...","description":"Run the tests with cgo"}`, "CGO_ENABLED=1"},
		{"code's keyword arguments", "python",
			`{"code":"pd.read_csv('a.csv', encoding='gbk')","title":"Read the CSV"}`, "encoding='gbk'"},
		{"Codex's exec_command: how long to wait and how much to show are the harness's", "exec_command",
			`{"cmd":"npm test -- --runInBand","yield_time_ms":1000,"max_output_tokens":12000,"justification":"Run the tests serially"}`, "--runInBand"},
		{"an environment its arguments give", "shell",
			`{"command":["bash","-lc","make"],"env":{"GOFLAGS":"-mod=mod"}}`, "GOFLAGS=-mod=mod"},
		{"an edit writes text: nothing it takes is a setting", "Edit",
			`{"file_path":"main.go","old_string":"return nil","new_string":"return err","replace_all":false}`, ""},
		{"a tool's request parameters are settings, its note is not", "http_request",
			`{"method":"GET","url":"https://api.example.com/v2/orders","params":{"status":"open"},"note":"fetch the orders to reconcile them today"}`, "method=GET params.status=open"},
		{"a tool's short title is no setting either", "dashboard",
			`{"panel":"latency","title":"p99 latency"}`, "panel=latency"},
		{"output shaping of a tool's call is not a setting", "Read",
			`{"file_path":"/var/log/app.log","offset":280,"limit":40}`, "file_path=/var/log/app.log"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := callargs.Join(params(act(c.tool, c.args)), " "); got != c.want {
				t.Errorf("settings %q, want %q", got, c.want)
			}
		})
	}
}

// The validator refuses every shape of fix a future agent must not act
// on, and passes real fixes.
func TestFixValidator(t *testing.T) {
	npmTest := act("Bash", `{"command":"npm test"}`)
	npmTest.cause = "Error: Cannot find module 'jest-environment-jsdom'"
	flag := func(prog, key, value string) callargs.Param {
		return callargs.Param{Key: key, Value: value, Flag: true, Scope: prog}
	}
	cases := []struct {
		name       string
		failed     *action
		fix        *action
		settings   []callargs.Param
		shown      string
		want       error
		wantPassed bool
	}{
		{"a changed flag of the command that failed", act("Bash", `{"command":"helm upgrade api ./chart"}`),
			act("Bash", `{"command":"helm upgrade api ./chart --wait --timeout 10m"}`),
			[]callargs.Param{flag("helm", "--wait", ""), flag("helm", "--timeout", "10m")}, "", nil, true},
		{"code's keyword argument", act("python", `{"code":"pd.read_csv('a.csv')"}`), act("python", `{"code":"pd.read_csv('a.csv', encoding='gbk')"}`),
			[]callargs.Param{{Key: "encoding", Value: "'gbk'"}}, "", nil, true},
		{"a call to run first that installs what was missing", npmTest, act("Bash", `{"command":"npm install --save-dev jest-environment-jsdom"}`),
			nil, "npm install --save-dev jest-environment-jsdom", nil, true},
		{"a tool's parameters, nothing ran", act("Read", `{"file_path":"src/a.ts"}`), act("Read", `{"file_path":"src/core/a.ts"}`),
			nil, "", errNotExecuted, false},
		{"a bare path: another file is another target", act("Read", `{"file_path":"src/a.ts"}`), act("Read", `{"file_path":"src/core/a.ts"}`),
			[]callargs.Param{{Key: "file_path", Value: "src/core/a.ts"}}, "", errBarePath, false},
		{"a bare path as a command's flag value", act("Bash", `{"command":"ls -lh ~/logs/a*.jsonl"}`), act("Bash", `{"command":"ls -lh ~/logs/b*.jsonl"}`),
			[]callargs.Param{flag("ls", "-lh", "~/logs/b*.jsonl")}, "", errBarePath, false},
		{"a glob as a search pattern", act("Bash", `{"command":"find . -name '*.ts'"}`), act("Bash", `{"command":"find . -name '*filter*'"}`),
			[]callargs.Param{flag("find", "-name", `"*filter*"`)}, "", errBarePath, false},
		{"a path shown as the call to run first", npmTest, act("Bash", `{"command":"/home/dana/app/node_modules"}`),
			nil, "/home/dana/app/node_modules", errBarePath, false},
		{"a fragment of a command substitution as a setting", act("Bash", `{"command":"find $(go env GOMODCACHE)/x"}`), act("Bash", `{"command":"GOMODCACHE=$(go env GOMODCACHE) find x"}`),
			[]callargs.Param{{Key: "GOMODCACHE", Value: "$(go"}}, "", errFragment, false},
		{"a fragment shown as the call", npmTest, act("Bash", `{"command":"GOMODCACHE)/github.com/acme/x@*"}`),
			nil, "GOMODCACHE)/github.com/acme/x@*", errFragment, false},
		{"rm -rf offered as a flag to add to an unrelated command", npmTest, act("Bash", `{"command":"rm -rf node_modules && npm test"}`),
			[]callargs.Param{flag("rm", "-rf", "")}, "", errDestructive, false},
		{"a destructive command at a broad target, to run first", npmTest, act("Bash", `{"command":"rm -rf ~"}`),
			nil, "rm -rf ~", errDestructive, false},
		{"a hard reset offered for a failed test run", npmTest, act("Bash", `{"command":"git reset --hard origin/main"}`),
			nil, "git reset --hard origin/main", errDestructive, false},
		{"the same destructive operation, corrected, is in context", act("Bash", `{"command":"git push --force origin main"}`),
			act("Bash", `{"command":"git push --force-with-lease origin main"}`), nil, "git push --force-with-lease origin main", nil, true},
		{"another subcommand's flags are no fix for this one", act("Bash", `{"command":"git status"}`), act("Bash", `{"command":"git fsck --no-dangling"}`),
			[]callargs.Param{flag("git", "--no-dangling", "")}, "", errOtherCall, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkFix(c.failed, c.fix, c.settings, c.shown)
			if c.wantPassed {
				if err != nil {
					t.Errorf("refused (%v), want it passed", err)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Errorf("got %v, want %v", err, c.want)
			}
		})
	}
}

func TestFragments(t *testing.T) {
	for s, want := range map[string]bool{
		"$(go":                                true,
		"GOMODCACHE)/github.com/acme/x@*":     true,
		`'unterminated`:                       true,
		"| head -n 3":                         true,
		"npm test &&":                         true,
		"go test ./...":                       false,
		`sed -i 's/a/b/' Makefile && make`:    false,
		`python -c "print(1)"`:                false,
		"--set image.tag=v2 --wait":           false,
		`jq '.items[] | {name: .metadata.n}'`: false,
	} {
		if got := fragment(s); got != want {
			t.Errorf("fragment(%q) = %v, want %v", s, got, want)
		}
	}
}

// A long pasted one-liner is named by what it does, not pasted whole: an
// inline script of several statements is elided, quiet steps (a pause,
// an echo) and the filters of its output left out.
func TestLongOneLinersAreSummarised(t *testing.T) {
	a := act("Bash", `{"command":"cd /srv/app && sleep 2 && python3 -c \"import json,sys; d=json.load(open('out.json')); print(len(d['items'])); print(sorted(d)[:3])\" | head -n 5 && echo done"}`)
	got := summarizeCall(a, 120)
	if !strings.Contains(got, "cd /srv/app && python3 -c \"…\"") || strings.Contains(got, "json.load") || strings.Contains(got, "sleep") || strings.Contains(got, "head -n") {
		t.Errorf("summary %q", got)
	}
	short := act("Bash", `{"command":"head -c 200 sales.csv | xxd | head -3"}`)
	if got := summarizeCall(short, 120); got != "head -c 200 sales.csv | xxd | head -3" {
		t.Errorf("a short line is kept as it is, got %q", got)
	}
}

// On a session as Claude Code writes it, a lesson names the flag that
// fixed the command, not the Bash tool's description of the call; an
// edit's old and new text are never a fix; rm -rf is never offered as a
// flag; and of two calls of one tool run at once, each result belongs to
// its own call, by ID.
func TestLessonsOnlyFromWhatRan(t *testing.T) {
	bash := func(id, cmd, desc string) memory.Event {
		return memory.Event{Role: memory.RoleAssistant, ToolName: "Bash", CallID: id,
			ToolArgs: `{"command":` + quoteJSON(cmd) + `,"description":` + quoteJSON(desc) + `}`}
	}
	result := func(id, out string, failed bool) memory.Event {
		e := memory.Event{Role: memory.RoleTool, ToolName: "Bash", CallID: id}
		if failed {
			e.Error = out
		} else {
			e.ToolResult = out
		}
		return e
	}
	t.Run("the description is not the fix", func(t *testing.T) {
		tr := session(t,
			user("Deploy the API to staging."),
			bash("c1", "helm upgrade --install api ./chart -n staging", "Deploy the API"),
			result("c1", "Error: UPGRADE FAILED: timed out waiting for the condition", true),
			bash("c2", "helm upgrade --install api ./chart -n staging --wait --timeout 10m", "Deploy the API and wait for the rollout"),
			result("c2", "STATUS: deployed", false),
		)
		ls := ofKind(extract(t, tr), memory.KindLesson)
		if len(ls) != 1 || !strings.Contains(ls[0].Content, "--wait --timeout 10m") || strings.Contains(ls[0].Content, "description") || strings.Contains(ls[0].Content, "rollout") {
			t.Errorf("lessons %+v, want one naming --wait --timeout 10m and no description", ls)
		}
	})
	t.Run("an edit's payload is never the fix", func(t *testing.T) {
		tr := session(t,
			user("Fix the failing build."),
			bash("c1", "go build ./...", "Build"),
			result("c1", "./main.go:12:2: undefined: fooBar", true),
			memory.Event{Role: memory.RoleAssistant, ToolName: "Edit", CallID: "e1", ToolArgs: `{"file_path":"main.go","old_string":"fooBar()","new_string":"foo.Bar()"}`},
			memory.Event{Role: memory.RoleTool, ToolName: "Edit", CallID: "e1", ToolResult: "The file main.go has been updated."},
			bash("c2", "go build ./...", "Build again"),
			result("c2", "", false),
		)
		for _, c := range extract(t, tr).Candidates {
			if strings.Contains(c.Content+c.CounterExample, "old_string") || strings.Contains(c.Content+c.CounterExample, "new_string") || strings.Contains(c.Content, "foo.Bar()") {
				t.Errorf("a memory holds an edit's payload: %+v", c)
			}
		}
	})
	t.Run("rm -rf is never a flag to add", func(t *testing.T) {
		tr := session(t,
			user("Run the tests."),
			bash("c1", "npm test", "Run the tests"),
			result("c1", "Error: Cannot find module 'jest-environment-jsdom'", true),
			bash("c2", "rm -rf node_modules && npm test", "Clean install and test"),
			result("c2", "Tests: 12 passed", false),
		)
		for _, c := range ofKind(extract(t, tr), memory.KindLesson) {
			if strings.Contains(c.Content, "use -rf") || strings.Contains(c.Content, "use -r") {
				t.Errorf("rm's flags offered as the fix: %q", c.Content)
			}
		}
	})
	t.Run("parallel calls of one tool, the first failing", func(t *testing.T) {
		tr := session(t,
			user("Run the billing and ledger tests."),
			bash("a", "go test ./billing/...", "Billing tests"),
			bash("b", "go test ./ledger/...", "Ledger tests"),
			result("b", "ok  ledger 0.4s", false),
			result("a", "--- FAIL: TestInvoiceRounding\nFAIL billing 0.2s", true),
		)
		acts := buildActions(tr.Events)
		if len(acts) != 2 {
			t.Fatalf("%d actions, want 2", len(acts))
		}
		billing, ledger := acts[0], acts[1]
		if !billing.failed || !strings.Contains(billing.result+billing.errText, "TestInvoiceRounding") || billing.events[1] != 4 {
			t.Errorf("the billing call got %+v, want the failing result (event 4)", billing)
		}
		if ledger.failed || ledger.result != "ok  ledger 0.4s" || ledger.events[1] != 3 {
			t.Errorf("the ledger call got %+v, want its own passing result (event 3)", ledger)
		}
		ep := extract(t, tr).Episode
		if len(ep.Failures) != 1 || !strings.Contains(ep.Failures[0].Attempt, "billing") {
			t.Errorf("episode failures %+v, want the billing run only", ep.Failures)
		}
	})
}

func quoteJSON(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
