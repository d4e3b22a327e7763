package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// conformanceDir is where scripts/fetch-conformance.sh installs the
// official MCP conformance suite and its Node.js (make test runs it).
func conformanceDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("bash", "../../scripts/fetch-conformance.sh", "--print-path").Output()
	if err != nil {
		t.Fatalf("fetch-conformance.sh --print-path: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// conformanceApplies are the server scenarios that apply to Hindsight:
// each must pass every check.
var conformanceApplies = []string{
	"server-initialize", "ping", "tools-list", "resources-list", "prompts-list",
	"server-sse-multiple-streams", "server-sse-polling", "dns-rebinding-protection",
}

// conformanceDoesNotApply are the others, each with why it does not apply
// and what its failure must say: most call fixtures (test_* tools, prompts
// and test:// resources) of the suite's reference server, which a memory
// server does not have. The test checks that each fails for that reason
// and no other, so a real defect cannot hide among them.
var conformanceDoesNotApply = map[string]struct{ why, says string }{
	"logging-set-level":             {"Hindsight sends clients no log messages (its log is the server's), so it declares no logging capability", "logging not supported"},
	"tools-call-with-logging":       {"needs the logging capability (above) and the fixture tool test_tool_with_logging", "logging not supported"},
	"completion-complete":           {"completes an argument of the fixture prompt test_prompt_with_arguments; Hindsight's one prompt takes free text, so it declares no completions", "completions not supported"},
	"resources-subscribe":           {"subscribes to the fixture test://watched-resource; memories change through the ledger and are read when wanted, so Hindsight declares no subscriptions", "subscribe not supported"},
	"resources-unsubscribe":         {"as resources-subscribe", "subscribe not supported"},
	"resources-read-text":           {"reads the fixture test://static-text", "test://static-text"},
	"resources-read-binary":         {"reads the fixture test://static-binary", "test://static-binary"},
	"resources-templates-read":      {"reads the fixture template test://template/{id}/data", "test://template/123/data"},
	"prompts-get-simple":            {"gets the fixture prompt test_simple_prompt", "test_simple_prompt"},
	"prompts-get-with-args":         {"gets the fixture prompt test_prompt_with_arguments", "test_prompt_with_arguments"},
	"prompts-get-embedded-resource": {"gets the fixture prompt test_prompt_with_embedded_resource", "test_prompt_with_embedded_resource"},
	"prompts-get-with-image":        {"gets the fixture prompt test_prompt_with_image", "test_prompt_with_image"},
	"tools-call-simple-text":        {"calls the fixture tool test_simple_text", "test_simple_text"},
	"tools-call-image":              {"calls the fixture tool test_image_content", "test_image_content"},
	"tools-call-audio":              {"calls the fixture tool test_audio_content", "test_audio_content"},
	"tools-call-embedded-resource":  {"calls the fixture tool test_embedded_resource", "test_embedded_resource"},
	"tools-call-mixed-content":      {"calls the fixture tool test_multiple_content_types", "test_multiple_content_types"},
	"tools-call-error":              {"calls the fixture tool test_error_handling", "test_error_handling"},
	"tools-call-with-progress":      {"calls the fixture tool test_tool_with_progress", "test_tool_with_progress"},
	"tools-call-sampling":           {"calls the fixture tool test_sampling; Hindsight never asks the client's model", "test_sampling"},
	"tools-call-elicitation":        {"calls the fixture tool test_elicitation; Hindsight never asks the user", "test_elicitation"},
	"elicitation-sep1034-defaults":  {"calls the fixture tool test_elicitation_sep1034_defaults", "test_elicitation_sep1034_defaults"},
	"elicitation-sep1330-enums":     {"calls the fixture tool test_elicitation_sep1330_enums", "test_elicitation_sep1330_enums"},
	"json-schema-2020-12":           {"lists the fixture tool json_schema_2020_12_tool", "json_schema_2020_12_tool"},
}

type conformanceCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// TestMCPConformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, with Node.js 22 from npm), every
// server scenario, active and pending, against hindsight dev over
// streamable HTTP.
func TestMCPConformance(t *testing.T) {
	dir := conformanceDir(t)
	runner := filepath.Join(dir, "run-conformance")
	if _, err := os.Stat(runner); err != nil {
		if os.Getenv("HINDSIGHT_REQUIRE_CONFORMANCE") != "" {
			t.Fatalf("the conformance suite is not installed (%v): run make conformance", err)
		}
		t.Skipf("the conformance suite is not installed (make conformance installs it): %v", err)
	}
	st := startTestDev(t, t.TempDir())
	defer st.Close()

	// Every scenario the suite has must be accounted for here.
	list, err := exec.Command(runner, "list", "--server").CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list: %v\n%s", err, list)
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^\s*-\s*(\S+)`).FindAllStringSubmatch(string(list), -1) {
		names = append(names, m[1])
	}
	pending, _ := exec.Command(runner, "list", "--server", "--suite", "pending").CombinedOutput()
	for _, m := range regexp.MustCompile(`(?m)^\s*-\s*(\S+)`).FindAllStringSubmatch(string(pending), -1) {
		if !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	for _, n := range names {
		if _, skip := conformanceDoesNotApply[n]; !skip && !slices.Contains(conformanceApplies, n) {
			t.Errorf("scenario %s is new: decide whether it applies and list it", n)
		}
	}

	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, runner, "server", "--url", st.mcpURL(), "--suite", "all", "-o", out)
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
	for _, n := range conformanceApplies {
		checks, ok := results[n]
		if !ok {
			t.Errorf("%s: no result\n%s", n, summary)
			continue
		}
		for _, c := range checks {
			if c.Status == "FAILURE" || c.Status == "WARNING" {
				t.Errorf("%s: %s %s: %s", n, c.ID, c.Status, c.ErrorMessage)
			}
		}
	}
	for n, na := range conformanceDoesNotApply {
		checks, ok := results[n]
		if !ok {
			t.Errorf("%s: no result\n%s", n, summary)
			continue
		}
		failed := false
		for _, c := range checks {
			if c.Status != "FAILURE" {
				continue
			}
			failed = true
			if !strings.Contains(c.ErrorMessage, na.says) {
				t.Errorf("%s (%s) failed for another reason than %q: %s: %s", n, na.why, na.says, c.ID, c.ErrorMessage)
			}
		}
		if !failed {
			t.Errorf("%s passes now: move it to conformanceApplies", n)
		}
	}
}
