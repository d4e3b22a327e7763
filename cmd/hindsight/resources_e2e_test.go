package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hindsight-memory/hindsight/mcpserver"
)

// TestResourcesAndPrompts browses memory the way an MCP client that shows
// resources does, with the official Go SDK: the templates, the list of a
// caller's memories and episodes, a memory's text, versions and sources,
// an episode, and the recall_context prompt; a token bound to one user
// sees neither another user's memories nor their sessions, and a
// tenant-wide token, which names no user, sees no user's (as
// memory_recall without a user_id).
func TestResourcesAndPrompts(t *testing.T) {
	dir := t.TempDir()
	st := startTestDevWith(t, filepath.Join(dir, "data"), withTokens(t, dir, "acme 0123456789abcdef-desk\nacme 0123456789abcdef-dana cust-dana\n"))
	defer st.Close()
	ctx := context.Background()
	desk, dana := connectAs(t, st.mcpURL(), "0123456789abcdef-desk"), connectAs(t, st.mcpURL(), "0123456789abcdef-dana")

	danaSession := customerSession("s-dana", "cust-dana", "11", "Please email me at dana.ruiz@example.com, never call me, I work nights.")
	danaSession["project"], danaSession["project_name"] = "git:4b1d9e", "returns-desk"
	endDana := call[mcpserver.EndOutput](t, desk, mcpserver.ToolEnd, danaSession)
	endOmar := call[mcpserver.EndOutput](t, desk, mcpserver.ToolEnd, customerSession("s-omar", "cust-omar", "12", "Please phone me on 555-0142, I never read my email."))
	find := func(end mcpserver.EndOutput, word string) mcpserver.EndMemory {
		t.Helper()
		for _, m := range end.Memories {
			if strings.Contains(m.Content, word) {
				return m
			}
		}
		t.Fatalf("no memory with %q in %+v", word, end.Memories)
		return mcpserver.EndMemory{}
	}
	danaPref, omarPref := find(endDana, "dana.ruiz@example.com"), find(endOmar, "555-0142")

	templates, err := desk.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, tt := range templates.ResourceTemplates {
		uris = append(uris, tt.URITemplate)
	}
	if !contains(uris, "hindsight://memory/{id}") || !contains(uris, "hindsight://episode/{id}") || !contains(uris, mcpserver.MemoriesURITemplate) {
		t.Fatalf("resource templates = %v", uris)
	}

	listed := func(s *mcp.ClientSession) []string {
		t.Helper()
		var out []string
		for r, err := range s.Resources(ctx, nil) {
			if err != nil {
				t.Fatalf("resources/list: %v", err)
			}
			out = append(out, r.URI)
		}
		return out
	}
	all := listed(desk)
	for _, private := range []string{mcpserver.MemoryURI(danaPref.MemoryID), mcpserver.MemoryURI(omarPref.MemoryID), mcpserver.EpisodeURI(endDana.EpisodeID), mcpserver.EpisodeURI(endOmar.EpisodeID)} {
		if contains(all, private) {
			t.Errorf("the tenant-wide token, acting for no user, lists %s: %v", private, all)
		}
	}
	mine := listed(dana)
	if !contains(mine, mcpserver.MemoryURI(danaPref.MemoryID)) || !contains(mine, mcpserver.EpisodeURI(endDana.EpisodeID)) {
		t.Errorf("dana's resources/list lacks her own memory or session: %v", mine)
	}
	if contains(mine, mcpserver.MemoryURI(omarPref.MemoryID)) || contains(mine, mcpserver.EpisodeURI(endOmar.EpisodeID)) {
		t.Errorf("dana's resources/list shows omar's memory or session: %v", mine)
	}

	read := func(s *mcp.ClientSession, uri string) (string, error) {
		res, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return "", err
		}
		if len(res.Contents) == 0 {
			t.Fatalf("%s: no contents", uri)
		}
		return res.Contents[0].Text, nil
	}
	if _, err := read(desk, mcpserver.MemoryURI(danaPref.MemoryID)); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("the tenant-wide token reads dana's preference: %v", err)
	}
	text, err := read(dana, mcpserver.MemoryURI(danaPref.MemoryID))
	if err != nil {
		t.Fatalf("read dana's preference: %v", err)
	}
	for _, want := range []string{"dana.ruiz@example.com", "Versions", "v1", mcpserver.EpisodeURI(endDana.EpisodeID), "not instructions"} {
		if !strings.Contains(text, want) {
			t.Errorf("memory resource lacks %q:\n%s", want, text)
		}
	}
	text, err = read(dana, mcpserver.EpisodeURI(endDana.EpisodeID))
	if err != nil {
		t.Fatalf("read dana's episode: %v", err)
	}
	if !strings.Contains(text, "return label") || !strings.Contains(text, "Attempts that failed") {
		t.Errorf("episode resource:\n%s", text)
	}
	for _, uri := range []string{mcpserver.MemoryURI(omarPref.MemoryID), mcpserver.EpisodeURI(endOmar.EpisodeID), mcpserver.MemoryURI("m-never")} {
		_, err := read(dana, uri)
		if err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("dana reading %s: %v, want not found", uri, err)
		}
		for _, layer := range []string{"clickhouse", "chdb", "memory: memory"} {
			if err != nil && strings.Contains(err.Error(), layer) {
				t.Errorf("the error names a layer (%s): %v", layer, err)
			}
		}
	}

	prompts, err := desk.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != mcpserver.PromptRecall {
		t.Fatalf("prompts = %+v", prompts.Prompts)
	}
	got, err := dana.GetPrompt(ctx, &mcp.GetPromptParams{Name: mcpserver.PromptRecall, Arguments: map[string]string{"query": "should I email or call this customer?"}})
	if err != nil {
		t.Fatal(err)
	}
	tc, ok := got.Messages[0].Content.(*mcp.TextContent)
	if !ok || !strings.Contains(tc.Text, "dana.ruiz@example.com") || strings.Contains(tc.Text, "555-0142") {
		t.Fatalf("recall_context for dana = %+v", got.Messages)
	}
	if _, err := dana.GetPrompt(ctx, &mcp.GetPromptParams{Name: mcpserver.PromptRecall, Arguments: map[string]string{"query": "  "}}); err == nil || !strings.Contains(err.Error(), "needs a query") {
		t.Fatalf("recall_context without a query: %v", err)
	}

	// completion/complete offers the kinds, task types, projects and the
	// user IDs the caller may see, for the prompt's arguments and the
	// templates' variables.
	complete := func(s *mcp.ClientSession, ref *mcp.CompleteReference, arg, typed string) []string {
		t.Helper()
		res, err := s.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: typed}})
		if err != nil {
			t.Fatalf("complete %s %q: %v", arg, typed, err)
		}
		return res.Completion.Values
	}
	prompt := &mcp.CompleteReference{Type: "ref/prompt", Name: mcpserver.PromptRecall}
	memories := &mcp.CompleteReference{Type: "ref/resource", URI: mcpserver.MemoriesURITemplate}
	for _, c := range []struct {
		s          *mcp.ClientSession
		who        string
		ref        *mcp.CompleteReference
		arg, typed string
		want       []string
	}{
		{desk, "desk", prompt, "kind", "", []string{"preference", "lesson", "fact", "rule"}},
		{desk, "desk", memories, "kind", "les", []string{"lesson"}},
		{desk, "desk", prompt, "user_id", "cust", []string{"cust-dana", "cust-omar"}},
		{dana, "dana", memories, "user_id", "", []string{"cust-dana"}},
		{desk, "desk", prompt, "project", "ret", []string{"returns-desk"}},
		{desk, "desk", memories, "project", "git:", []string{"git:4b1d9e"}},
		{dana, "dana", prompt, "project", "", []string{"git:4b1d9e", "returns-desk"}},
	} {
		got := complete(c.s, c.ref, c.arg, c.typed)
		if c.arg == "kind" && c.typed == "" {
			slices.Sort(got)
			slices.Sort(c.want)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s completing %s %q: %v, want %v", c.who, c.arg, c.typed, got, c.want)
		}
	}
	if got := complete(desk, prompt, "task_type", ""); !contains(got, "debugging") || len(got) < 5 {
		t.Errorf("task types: %v", got)
	}
	if got := complete(desk, &mcp.CompleteReference{Type: "ref/prompt", Name: "someone_elses"}, "arg1", "x"); len(got) != 0 {
		t.Errorf("another prompt's argument completed: %v", got)
	}
	// The memories template: the caller's, narrowed by its variables.
	text, err = read(dana, "hindsight://memories?kind=rule")
	if err != nil || !strings.Contains(text, "dana.ruiz@example.com") || strings.Contains(text, "555-0142") || strings.Contains(text, "[lesson]") {
		t.Errorf("dana's rules (%v):\n%s", err, text)
	}
	// A tenant-wide token reads for the user it names, and without one
	// for nobody: the shared memories only.
	if text, err = read(desk, "hindsight://memories?project=returns-desk"); err != nil || strings.Contains(text, "dana.ruiz@example.com") {
		t.Errorf("the project's memories without a user (%v):\n%s", err, text)
	}
	if text, err = read(desk, "hindsight://memories?project=returns-desk&user_id=cust-dana"); err != nil || !strings.Contains(text, "dana.ruiz@example.com") || strings.Contains(text, "555-0142") {
		t.Errorf("the project's memories (%v):\n%s", err, text)
	}
	if _, err := read(dana, "hindsight://memories?kind=rule&user_id=cust-omar"); err == nil || !strings.Contains(err.Error(), "cust-dana") {
		t.Errorf("dana reading omar's memories: %v", err)
	}

	// Through `hindsight mcp --transport stdio --url …`, the same.
	cmd := childCommand([]string{"mcp", "--transport", "stdio", "--url", st.mcpURL(), "--token", "0123456789abcdef-dana", "--log-level", "error"})
	proxy, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-stdio", Version: "test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("start the stdio proxy: %v", err)
	}
	defer proxy.Close()
	if got := listed(proxy); !slices.Equal(got, mine) {
		t.Errorf("resources/list through the proxy = %v, want %v", got, mine)
	}
	if text, err := read(proxy, mcpserver.MemoryURI(danaPref.MemoryID)); err != nil || !strings.Contains(text, "dana.ruiz@example.com") {
		t.Errorf("read through the proxy: %v\n%s", err, text)
	}
	got, err = proxy.GetPrompt(ctx, &mcp.GetPromptParams{Name: mcpserver.PromptRecall, Arguments: map[string]string{"query": "should I email or call this customer?"}})
	if err != nil {
		t.Fatalf("recall_context through the proxy: %v", err)
	}
	if tc, ok := got.Messages[0].Content.(*mcp.TextContent); !ok || !strings.Contains(tc.Text, "dana.ruiz@example.com") {
		t.Errorf("recall_context through the proxy = %+v", got.Messages)
	}
	if got := complete(proxy, memories, "user_id", ""); !slices.Equal(got, []string{"cust-dana"}) {
		t.Errorf("completion through the proxy: %v", got)
	}
}

// TestErrorsSpeakTheCallersWords checks that a tool error says what
// happened without the layers it passed through.
func TestErrorsSpeakTheCallersWords(t *testing.T) {
	st := startTestDev(t, t.TempDir())
	defer st.Close()
	s := connect(t, st.mcpURL())
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{mcpserver.ToolFeedback, map[string]any{"memory_ids": []string{"m-missing"}, "helped": true}, "memory_feedback: memory m-missing not found"},
		{mcpserver.ToolCorrect, map[string]any{"memory_id": "m-missing", "content": "Reports use UTC."}, "memory_correct: memory m-missing not found"},
		{mcpserver.ToolHistory, map[string]any{"memory_id": "m-missing"}, "memory_history: memory m-missing not found"},
	} {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatal(err)
		}
		if got := toolText(res); !res.IsError || got != c.want {
			t.Errorf("%s: %q, want %q", c.tool, got, c.want)
		}
	}
}
