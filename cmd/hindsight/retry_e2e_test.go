package main

import (
	"testing"

	"github.com/hindsight-memory/hindsight/mcpserver"
)

// TestRetriesChangeNothing: memory_store and memory_feedback are safe to
// retry, as their annotations say. Four identical stores leave one
// version; feedback retried with its request_id, or resent at once without
// one, moves confidence once; a new request_id is a new request.
func TestRetriesChangeNothing(t *testing.T) {
	st := startTestDev(t, t.TempDir())
	defer st.Close()
	s := connect(t, st.mcpURL())
	args := map[string]any{"content": "Invoices are due on the 5th of each month.", "kind": "fact"}
	first := call[mcpserver.DecisionOutput](t, s, mcpserver.ToolStore, args)
	if first.Repeat {
		t.Fatalf("the first store is a repeat: %+v", first)
	}
	for range 3 {
		again := call[mcpserver.DecisionOutput](t, s, mcpserver.ToolStore, args)
		if !again.Repeat || again.DecisionID != first.DecisionID || again.MemoryID != first.MemoryID {
			t.Fatalf("a retried store = %+v, want the first answer (%s) marked repeat", again, first.DecisionID)
		}
	}
	if h := history(t, s, first.MemoryID); len(h.Versions) != 1 {
		t.Fatalf("four identical stores wrote %d versions", len(h.Versions))
	}

	feedback := func(args map[string]any) mcpserver.DecisionsOutput {
		return call[mcpserver.DecisionsOutput](t, s, mcpserver.ToolFeedback, args)
	}
	a := feedback(map[string]any{"memory_ids": []string{first.MemoryID}, "helped": true, "request_id": "task-17/feedback"})
	b := feedback(map[string]any{"memory_ids": []string{first.MemoryID}, "helped": true, "request_id": "task-17/feedback"})
	if a.Repeat || !b.Repeat || b.Decisions[0].Confidence != a.Decisions[0].Confidence {
		t.Fatalf("feedback retried with its request_id: %+v then %+v", a, b)
	}
	c := feedback(map[string]any{"memory_ids": []string{first.MemoryID}, "helped": true, "request_id": "task-18/feedback"})
	if c.Repeat || c.Decisions[0].Confidence <= a.Decisions[0].Confidence {
		t.Fatalf("feedback of another task (a new request_id) did not count: %+v after %+v", c, a)
	}
	d := feedback(map[string]any{"memory_ids": []string{first.MemoryID}, "helped": false})
	e := feedback(map[string]any{"memory_ids": []string{first.MemoryID}, "helped": false})
	if d.Repeat || !e.Repeat {
		t.Fatalf("feedback resent at once without a request_id: %+v then %+v", d, e)
	}
	if h := history(t, s, first.MemoryID); len(h.Versions) != 4 {
		t.Fatalf("after three feedbacks that count the memory has %d versions, want 4", len(h.Versions))
	}
}
