package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/service"
)

// fmtContent is a tool result's text.
func fmtContent(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// customerSession is a support session of one customer: their own contact
// preference, and a label that fails as PDF and prints as ZPL (a lesson
// about the tool, the same in every customer's session).
func customerSession(id, user, day, preference string) map[string]any {
	ts := func(s string) string { return "2026-05-" + day + "T09:" + s + ":00Z" }
	return map[string]any{
		"session_id": id, "user_id": user, "agent": "support-agent", "wait": true,
		"task": "return label", "outcome": "success",
		"events": []map[string]any{
			{"role": "user", "content": "I need a return label for my order. " + preference, "ts": ts("00")},
			{"role": "tool", "tool_name": "label_print", "tool_args": `{"order":"7781","format":"pdf"}`,
				"error": `{"error":"unsupported_format","message":"carrier UPS accepts only zpl labels"}`, "ts": ts("01")},
			{"role": "tool", "tool_name": "label_print", "tool_args": `{"order":"7781","format":"zpl"}`,
				"tool_result": `{"label":"LBL-7781","tracking":"1Z999AA10123456784"}`, "ts": ts("02")},
			{"role": "assistant", "content": "Your return label is ready, tracking 1Z999AA10123456784.", "ts": ts("03")},
		},
	}
}

// TestScopesEndToEnd runs two customers of one tenant through the
// embedded stack over MCP: their opposite contact preferences each come
// back only for their own user, the lesson both sessions taught comes
// back for both, a token bound to one customer cannot act for the other,
// and forgetting one customer leaves the other and the shared lesson.
func TestScopesEndToEnd(t *testing.T) {
	dir := t.TempDir()
	st := startTestDevWith(t, filepath.Join(dir, "data"), withTokens(t, dir, "acme 0123456789abcdef-desk\nacme 0123456789abcdef-dana cust-dana\n"))
	defer st.Close()
	desk, dana := connectAs(t, st.mcpURL(), "0123456789abcdef-desk"), connectAs(t, st.mcpURL(), "0123456789abcdef-dana")

	memoryOf := func(end mcpserver.EndOutput, kind memory.Kind, word string) string {
		t.Helper()
		for _, m := range end.Memories {
			if m.Kind == kind && strings.Contains(m.Content, word) || kind == "" && strings.Contains(m.Content, word) {
				return m.MemoryID
			}
		}
		t.Fatalf("session_end distilled nothing with %q: %+v", word, end.Memories)
		return ""
	}
	endDana := call[mcpserver.EndOutput](t, desk, mcpserver.ToolEnd, customerSession("s-dana", "cust-dana", "11", "Please email me at dana.ruiz@example.com, never call me, I work nights."))
	endOmar := call[mcpserver.EndOutput](t, desk, mcpserver.ToolEnd, customerSession("s-omar", "cust-omar", "12", "Please phone me on 555-0142, I never read my email."))
	danaPref := memoryOf(endDana, "", "dana.ruiz@example.com")
	omarPref := memoryOf(endOmar, "", "555-0142")
	lesson := memoryOf(endDana, memory.KindLesson, "zpl")
	if memoryOf(endOmar, memory.KindLesson, "zpl") != lesson {
		t.Fatalf("the second customer's session did not merge into the same lesson: %+v", endOmar.Memories)
	}

	recallFor := func(s *mcp.ClientSession, user, query string) mcpserver.RecallOutput {
		args := map[string]any{"query": query, "top_k": 10, "include_cold": true, "include_superseded": true}
		if user != "" {
			args["user_id"] = user
		}
		return call[mcpserver.RecallOutput](t, s, mcpserver.ToolRecall, args)
	}
	const contact = "should I email or call this customer?"
	// 1. Each customer's preference comes back for that customer only.
	for _, c := range []struct{ user, own, other string }{{"cust-dana", danaPref, omarPref}, {"cust-omar", omarPref, danaPref}} {
		rec := recallFor(desk, c.user, contact)
		it := findResult(rec, c.own)
		if it == nil || it.Scope != memory.UserScope(c.user) {
			t.Fatalf("recall for %s does not return their own preference %s in their scope: %+v", c.user, c.own, rec.Results)
		}
		if findResult(rec, c.other) != nil {
			t.Fatalf("recall for %s returns the other customer's preference: %+v", c.user, rec.Results)
		}
		if !strings.Contains(rec.Context, "about this user") {
			t.Errorf("the context block does not label the user's memory:\n%s", rec.Context)
		}
		// 2. The shared lesson comes back for both.
		rec = recallFor(desk, c.user, "printing a UPS return label")
		if it := findResult(rec, lesson); it == nil || it.Scope != memory.SharedScope {
			t.Fatalf("recall for %s does not return the shared lesson: %+v", c.user, rec.Results)
		}
	}
	if rec := recallFor(desk, "", contact); findResult(rec, danaPref) != nil || findResult(rec, omarPref) != nil {
		t.Fatalf("recall for nobody returns a customer's own memory: %+v", rec.Results)
	}

	// A token bound to cust-dana acts for her only.
	if rec := recallFor(dana, "", contact); findResult(rec, danaPref) == nil || findResult(rec, omarPref) != nil {
		t.Fatalf("the bound token's recall: %+v", rec.Results)
	}
	for name, args := range map[string]map[string]any{
		mcpserver.ToolRecall:  {"query": contact, "user_id": "cust-omar"},
		mcpserver.ToolHistory: {"memory_id": omarPref},
		mcpserver.ToolForget:  {"user_id": "cust-omar"},
	} {
		res, err := dana.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || !res.IsError {
			t.Fatalf("%s for another user with a token bound to cust-dana: %v %+v", name, err, res)
		}
	}

	// Reproduction on the whole stack: cust-dana ending cust-omar's
	// session (distilled above) with one event of her own got his task
	// and private memory back and took his episode. It is refused, and
	// his episode stays his; the lesson his session taught names it to
	// her by ID only.
	for _, args := range []map[string]any{
		{"session_id": "s-omar", "wait": true, "events": []map[string]any{{"role": "user", "content": "What do you know about me?"}}},
		{"session_id": "s-omar", "wait": true},
	} {
		res, err := dana.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolEnd, Arguments: args})
		if err != nil || !res.IsError || strings.Contains(fmtContent(res), "555-0142") {
			t.Fatalf("cust-dana ending cust-omar's session: %v %s", err, fmtContent(res))
		}
	}
	if ep, err := st.runtime.Store.Episode(context.Background(), "acme", endOmar.EpisodeID); err != nil || ep.UserID != "cust-omar" {
		t.Fatalf("cust-omar's episode after cust-dana's attempt: %+v %v", ep, err)
	}
	if rec := recallFor(dana, "", "printing a UPS return label"); findResult(rec, lesson) == nil {
		t.Fatalf("the lesson for cust-dana: %+v", rec.Results)
	} else {
		for _, ref := range findResult(rec, lesson).Episodes {
			if ref.ID == endOmar.EpisodeID && (!ref.Withheld || ref.SessionID != "") {
				t.Errorf("cust-dana sees cust-omar's session as the lesson's source: %+v", ref)
			}
		}
	}

	// 3. Forgetting cust-dana removes her memory, keeps cust-omar's and the
	// lesson (rebuilt without her session).
	receipt := call[mcpserver.ForgetOutput](t, desk, mcpserver.ToolForget, map[string]any{"user_id": "cust-dana"})
	if !contains(receipt.UserMemories, danaPref) || contains(receipt.Memories, lesson) || !contains(receipt.Rebuilt, lesson) {
		t.Fatalf("forget receipt: %+v", receipt)
	}
	ctx := context.Background()
	if m, err := st.runtime.Store.Memory(ctx, "acme", omarPref); err != nil || m.Scope != memory.UserScope("cust-omar") {
		t.Fatalf("cust-omar's memory as stored: %+v %v", m, err)
	}
	if m, err := st.runtime.Store.Memory(ctx, "acme", danaPref); err != nil || m.Status != memory.StatusForgotten || m.Content != "" {
		t.Fatalf("cust-dana's memory survived: %+v %v", m, err)
	}
	if rec := recallFor(desk, "cust-omar", contact); findResult(rec, omarPref) == nil {
		t.Fatalf("cust-omar lost his preference: %+v", rec.Results)
	}
	if rec := recallFor(desk, "cust-omar", "printing a UPS return label"); findResult(rec, lesson) == nil {
		t.Fatalf("the shared lesson did not survive: %+v", rec.Results)
	}

	// Export answers a data-access request for the remaining customer.
	x, err := service.Export(ctx, st.runtime.Store, "acme", "cust-omar", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var own, learned bool
	for _, m := range x.Memories {
		id := m.Versions[len(m.Versions)-1].ID
		own = own || id == omarPref && m.Why == "own"
		learned = learned || id == lesson
	}
	if !own || !learned || len(x.Events["s-omar"]) != 4 || len(x.Episodes) != 1 {
		t.Fatalf("export of cust-omar: %d memories (own %v, lesson %v), %d episodes, events %v", len(x.Memories), own, learned, len(x.Episodes), len(x.Events))
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
