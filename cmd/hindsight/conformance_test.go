package main

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/memory"
)

// conformanceDir is where scripts/fetch-conformance.sh installs a pinned
// version of the official MCP conformance suite and its Node.js (make test
// runs it).
func conformanceDir(t *testing.T, version string) string {
	t.Helper()
	out, err := exec.Command("bash", "../../scripts/fetch-conformance.sh", "--print-path", version).Output()
	if err != nil {
		t.Fatalf("fetch-conformance.sh --print-path %s: %v", version, err)
	}
	return strings.TrimSpace(string(out))
}

// conformanceRuns are the suites run: 0.1.16's every scenario (it checks
// the 2025-11-25 protocol), and 0.2.0-alpha.12's requirement sets of both
// protocol versions, each exactly as the revision requires it.
var conformanceRuns = []struct{ version, requirements string }{
	{"0.1.16", ""},
	{"0.2.0-alpha.12", "2025-11-25"},
	{"0.2.0-alpha.12", "2026-07-28"},
}

// conformanceRule is how a scenario applies to Hindsight. A scenario that
// applies passes every check, but those in except, each of which may fail
// or warn only saying what is given (a check the suite cannot exercise
// without its diagnostic tools). A scenario that does not apply (says is
// set) fails, and each of its failures says that, so that a real defect
// cannot hide among them. An unscored one (an extension Hindsight does not
// declare, which the suite reports but never scores) is not judged.
type conformanceRule struct {
	why      string
	says     string
	except   map[string]string
	unscored bool
}

// fixture is a scenario that calls a fixture of the suite's reference
// server (test_* tools, prompts and test:// resources), which a memory
// server does not have.
func fixture(name string) conformanceRule {
	return conformanceRule{why: "calls the suite's fixture " + name, says: name}
}

var conformanceRules = map[string]conformanceRule{
	"server-initialize":           {why: "initialize"},
	"ping":                        {why: "ping"},
	"tools-list":                  {why: "lists Hindsight's tools"},
	"resources-list":              {why: "lists the caller's memories and episodes"},
	"prompts-list":                {why: "lists recall_context"},
	"completion-complete":         {why: "completes an argument (of a prompt Hindsight does not have, which gets no values)"},
	"server-sse-multiple-streams": {why: "streamable HTTP"},
	"server-sse-polling":          {why: "streamable HTTP"},
	"server-session-lifecycle":    {why: "session IDs, when the server keeps sessions"},
	"dns-rebinding-protection":    {why: "refuses foreign Host and Origin headers"},
	"http-header-validation":      {why: "checks the MCP headers of 2026-07-28"},
	"caching":                     {why: "list results of 2026-07-28 are cacheable"},
	"sep-2164-resource-not-found": {why: "an unknown resource is -32002", except: map[string]string{
		"sep-2164-data-uri": "data.uri is undefined", // a SHOULD: mcp-go sends no error data for an unknown resource
	}},
	"server-stateless": {why: "the stateless protocol of 2026-07-28", except: map[string]string{
		"sep-2575-server-rejects-undeclared-capability":          "test_missing_capability",
		"sep-2575-missing-capability-http-400":                   "test_missing_capability",
		"sep-2575-http-server-no-independent-requests-on-stream": "test_streaming_elicitation",
		"sep-2575-server-no-log-without-loglevel":                "test_logging_tool",
	}},
	"input-required-result-missing-input-response": {why: "a tools/call without the input asked for", except: map[string]string{
		"sep-2322-missing-response-rerequests": "instead of re-requesting", // it calls a fixture tool Hindsight does not have
	}},
	"input-required-result-unsupported-methods": {why: "methods a server without input requests refuses"},
	"input-required-result-ignore-extra-params": {why: "extra params are ignored", except: map[string]string{
		"sep-2322-ignore-unexpected-params": "test_input_required_result_elicitation",
	}},
	"input-required-result-validate-input": {why: "input responses to a request that asked for none are refused"},

	"logging-set-level":                    {why: "Hindsight sends clients no log messages (its log is the server's), so it declares no logging capability", says: "logging not supported"},
	"tools-call-with-logging":              {why: "needs the logging capability (above) and the fixture tool test_tool_with_logging", says: "logging not supported"},
	"resources-subscribe":                  {why: "subscribes to the fixture test://watched-resource; memories change through the ledger and are read when wanted, so Hindsight declares no subscriptions", says: "subscribe not supported"},
	"resources-unsubscribe":                {why: "as resources-subscribe", says: "subscribe not supported"},
	"resources-read-text":                  fixture("test://static-text"),
	"resources-read-binary":                fixture("test://static-binary"),
	"resources-templates-read":             fixture("test://template/123/data"),
	"prompts-get-simple":                   fixture("test_simple_prompt"),
	"prompts-get-with-args":                fixture("test_prompt_with_arguments"),
	"prompts-get-embedded-resource":        fixture("test_prompt_with_embedded_resource"),
	"prompts-get-with-image":               fixture("test_prompt_with_image"),
	"tools-call-simple-text":               fixture("test_simple_text"),
	"tools-call-image":                     fixture("test_image_content"),
	"tools-call-audio":                     fixture("test_audio_content"),
	"tools-call-embedded-resource":         fixture("test_embedded_resource"),
	"tools-call-mixed-content":             fixture("test_multiple_content_types"),
	"tools-call-error":                     fixture("test_error_handling"),
	"tools-call-with-progress":             fixture("test_tool_with_progress"),
	"tools-call-sampling":                  {why: "calls the fixture tool test_sampling; Hindsight never asks the client's model", says: "test_sampling"},
	"tools-call-elicitation":               {why: "calls the fixture tool test_elicitation; Hindsight never asks the user", says: "test_elicitation"},
	"elicitation-sep1034-defaults":         fixture("test_elicitation_sep1034_defaults"),
	"elicitation-sep1330-enums":            fixture("test_elicitation_sep1330_enums"),
	"json-schema-2020-12":                  fixture("json_schema_2020_12_tool"),
	"http-custom-header-server-validation": {why: "needs a tool with x-mcp-header annotations; Hindsight's tools take their arguments in the body", says: "x-mcp-header"},

	// The input-required results of 2026-07-28: a server that asks the
	// client for input mid-request. Hindsight never does; each calls a
	// fixture that does.
	"input-required-result-basic-elicitation":       fixture("test_input_required_result_elicitation"),
	"input-required-result-basic-sampling":          fixture("test_input_required_result_sampling"),
	"input-required-result-basic-list-roots":        fixture("test_input_required_result_list_roots"),
	"input-required-result-request-state":           fixture("test_input_required_result_request_state"),
	"input-required-result-multiple-input-requests": fixture("test_input_required_result_multiple_inputs"),
	"input-required-result-non-tool-request":        fixture("test_input_required_result_prompt"),
	"input-required-result-result-type":             fixture("test_input_required_result_elicitation"),
	"input-required-result-capability-check":        fixture("test_input_required_result_capabilities"),
	"input-required-result-multi-round":             {why: "needs a fixture tool that asks for input over several rounds", says: "InputRequiredResult"},
	"input-required-result-tampered-state":          {why: "needs a fixture tool's request state to tamper with", says: "InputRequiredResult"},
}

// The tasks extension (long-running tool calls), which Hindsight does not
// declare: its scenarios drive fixture tools (slow_compute, greet, ...).
// The suite reports them and never scores them.
func init() {
	for _, n := range []string{"tasks-lifecycle", "tasks-capability-negotiation", "tasks-wire-fields", "tasks-request-state-removal",
		"tasks-mrtr-input", "tasks-request-headers", "tasks-dispatch-and-envelope", "tasks-status-notifications",
		"tasks-required-task-error", "tasks-mrtr-composition"} {
		conformanceRules[n] = conformanceRule{why: "the tasks extension, which Hindsight does not declare", unscored: true}
	}
}

type conformanceCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
	Details      struct {
		Message string `json:"message"`
	} `json:"details"`
}

// message is what a check says: its error, else its details' message.
func (c conformanceCheck) message() string { return cmp.Or(c.ErrorMessage, c.Details.Message) }

// TestMCPConformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, with Node.js 22 from npm): 0.1.16's
// every scenario, and 0.2.0-alpha.12's requirements of the 2025-11-25 and
// 2026-07-28 protocols, against hindsight dev (which keeps sessions) and
// against the stateless endpoint `hindsight mcp --transport http` serves
// (the same handler, without sessions, over dev's service).
func TestMCPConformance(t *testing.T) {
	dirs := map[string]string{}
	for _, r := range conformanceRuns {
		dir := conformanceDir(t, r.version)
		if _, err := os.Stat(filepath.Join(dir, "run-conformance")); err != nil {
			if os.Getenv("HINDSIGHT_REQUIRE_CONFORMANCE") != "" {
				t.Fatalf("the conformance suite %s is not installed (%v): run make conformance", r.version, err)
			}
			t.Skipf("the conformance suite %s is not installed (make conformance installs it): %v", r.version, err)
		}
		dirs[r.version] = dir
	}
	st := startTestDev(t, t.TempDir())
	defer st.Close()
	stateless := httptest.NewServer(mcpMux(mcpserver.New(st.service, mcpserver.Options{Version: version}), nil, memory.DefaultTenant, nil, http.NewServeMux(), nil))
	defer stateless.Close()
	servers := []struct{ name, url string }{{"dev", st.mcpURL()}, {"stateless", stateless.URL + "/mcp"}}

	for _, r := range conformanceRuns {
		runner := filepath.Join(dirs[r.version], "run-conformance")
		set := "all"
		if r.requirements != "" {
			set = "requirements " + r.requirements
		}
		// Every scenario the suite has must be accounted for here.
		lists := [][]string{{"list", "--server"}, {"list", "--server", "--suite", "pending"}}
		if r.requirements != "" {
			lists = [][]string{{"list", "--server", "--requirements", r.requirements}}
		}
		for _, args := range lists {
			list, err := exec.Command(runner, args...).CombinedOutput()
			if err != nil && !slices.Contains(args, "pending") { // 0.1.16 exits 1 listing its pending suite
				t.Fatalf("%s %v: %v\n%s", r.version, args, err, list)
			}
			for _, m := range regexp.MustCompile(`(?m)^\s*-\s*(\S+)(\s+\[server\])?\s*$`).FindAllStringSubmatch(serverScenarios(string(list)), -1) {
				if _, ok := conformanceRules[m[1]]; !ok {
					t.Errorf("%s %s: scenario %s is new: decide whether it applies and list it", r.version, set, m[1])
				}
			}
		}
		for _, srv := range servers {
			t.Run(r.version+" "+set+" "+srv.name, func(t *testing.T) {
				results, summary := runConformance(t, runner, r.requirements, srv.url)
				checkConformance(t, results, summary, srv.name == "stateless")
			})
		}
	}
}

// serverScenarios is the part of a `list` output that names server
// scenarios: all of it but the client and authorization sections.
func serverScenarios(list string) string {
	var b strings.Builder
	keep := true
	for line := range strings.SplitSeq(list, "\n") {
		l := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(l, "Client scenarios"), strings.HasPrefix(l, "Authorization"):
			keep = false
		case strings.HasPrefix(l, "Server scenarios"), strings.HasPrefix(l, "Run and reported"):
			keep = true
		case strings.HasSuffix(l, "[client]"):
			continue
		}
		if keep {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// runConformance runs a suite against url and reads each scenario's
// checks.
func runConformance(t *testing.T, runner, requirements, url string) (map[string][]conformanceCheck, string) {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := []string{"server", "--url", url, "-o", out}
	if requirements != "" {
		args = append(args, "--requirements", requirements)
	} else {
		args = append(args, "--suite", "all")
	}
	cmd := exec.CommandContext(ctx, runner, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	summary, _ := cmd.CombinedOutput() // it exits 1 while any scenario fails
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	results := map[string][]conformanceCheck{}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(out, e.Name(), "checks.json"))
		if err != nil {
			continue
		}
		var checks []conformanceCheck
		if err := json.Unmarshal(raw, &checks); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		name := strings.TrimPrefix(regexp.MustCompile(`-\d{4}-\d\d-\d\dT.*$`).ReplaceAllString(e.Name(), ""), "server-")
		results[name] = checks
	}
	if len(results) == 0 {
		t.Fatalf("no results:\n%s", summary)
	}
	return results, string(summary)
}

// checkConformance judges a run's results by conformanceRules. On the
// stateless server, what needs a session (its lifecycle, a second SSE
// stream of one session) does not apply.
func checkConformance(t *testing.T, results map[string][]conformanceCheck, summary string, stateless bool) {
	t.Helper()
	for name, checks := range results {
		rule, ok := conformanceRules[name]
		if !ok {
			t.Errorf("%s: a scenario not in conformanceRules", name)
			continue
		}
		if rule.unscored {
			continue
		}
		if stateless {
			if r, ok := statelessRules[name]; ok {
				rule = r
			}
		}
		failed := false
		for _, c := range checks {
			if c.Status != "FAILURE" && c.Status != "WARNING" {
				continue
			}
			switch {
			case rule.says != "":
				if c.Status == "FAILURE" {
					failed = true
				}
				if !strings.Contains(c.message(), rule.says) {
					t.Errorf("%s (%s) failed for another reason than %q: %s: %s", name, rule.why, rule.says, c.ID, c.message())
				}
			case rule.except[c.ID] != "":
				if !strings.Contains(c.message(), rule.except[c.ID]) {
					t.Errorf("%s: %s %s for another reason than %q: %s", name, c.ID, c.Status, rule.except[c.ID], c.message())
				}
			default:
				t.Errorf("%s (%s): %s %s: %s", name, rule.why, c.ID, c.Status, c.message())
			}
		}
		if rule.says != "" && !failed {
			t.Errorf("%s passes now: it applies (%s)", name, rule.why)
		}
	}
	if t.Failed() {
		t.Logf("summary:\n%s", summary)
	}
}

// statelessRules are how scenarios apply to a server that keeps no
// sessions, where they differ.
var statelessRules = map[string]conformanceRule{
	// A stateless server issues no session IDs, by design: any replica
	// serves any request. At the 2025-11-25 wire the SSE scenarios warn
	// so, and run the rest of their checks.
	"server-sse-polling": {why: "streamable HTTP without sessions", except: map[string]string{
		"server-sse-polling-session": "did not provide session ID",
	}},
	"server-sse-multiple-streams": {why: "streamable HTTP without sessions", except: map[string]string{
		"server-sse-multiple-streams-session": "did not provide session ID",
	}},
}
