package memory

import (
	"strings"
	"testing"
	"time"
)

func TestParseTranscriptFormats(t *testing.T) {
	own := `{"session_id": "s1", "tenant": "acme", "task": "import", "outcome": "succeeded",
	  "events": [
	    {"role": "user", "content": "load sales.csv", "ts": "2026-03-02T09:00:00Z"},
	    {"role": "assistant", "tool_name": "python", "tool_args": {"code": "read_csv('sales.csv')"}, "ts": "2026-03-02T09:00:05Z"},
	    {"role": "tool", "tool_name": "python", "tool_args": "{\"code\": \"read_csv('sales.csv')\"}", "error": "UnicodeDecodeError"},
	    {"role": "user", "content": [{"type": "text", "text": "thanks"}], "ts": 1772442060}
	  ]}`
	tr, err := ParseTranscript([]byte(own), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Normalize(DefaultTenant, time.Now()); err != nil {
		t.Fatal(err)
	}
	if tr.Tenant != "acme" || tr.Outcome != OutcomeSuccess || len(tr.Events) != 4 {
		t.Fatalf("transcript = %+v", tr)
	}
	// An object and a JSON-encoded string are the same arguments.
	if tr.Events[1].ToolArgs != `{"code":"read_csv('sales.csv')"}` || tr.Events[2].ToolArgs != `{"code": "read_csv('sales.csv')"}` {
		t.Fatalf("tool_args = %q and %q", tr.Events[1].ToolArgs, tr.Events[2].ToolArgs)
	}
	// Missing timestamps take the previous event's; numbers are Unix seconds.
	if !tr.Events[2].TS.Equal(tr.Events[1].TS) || tr.Events[3].TS.Unix() != 1772442060 || tr.Events[3].Content != "thanks" {
		t.Fatalf("events = %+v", tr.Events)
	}
	for i, e := range tr.Events {
		if e.Seq != i || e.ID != EventID("acme", "s1", i) || e.Tenant != "acme" {
			t.Fatalf("event %d identity = %+v", i, e)
		}
	}

	chat := `[{"role": "system", "content": "be brief"}, {"role": "user", "content": "deploy"},
	  {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "helm", "arguments": "{\"release\":\"api\"}"}}]},
	  {"role": "tool", "tool_call_id": "c1", "content": "deployed"}]`
	tr2, err := ParseTranscript([]byte(chat), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr2.Normalize(DefaultTenant, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tr2.SessionID, "chat-") || len(tr2.Events) != 4 || tr2.Events[2].ToolName != "helm" ||
		tr2.Events[2].ToolArgs != `{"release":"api"}` || tr2.Events[3].ToolName != "helm" || tr2.Events[3].ToolResult != "deployed" {
		t.Fatalf("chat transcript = %+v", tr2)
	}
	again, _ := ParseTranscript([]byte(chat), nil)
	if again.SessionID != tr2.SessionID {
		t.Fatal("the derived session ID of a bare chat is not deterministic")
	}
}

func TestParseTranscriptErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, "empty"},
		{`{"session_id": "s", "events": "x"}`, "not a JSON object"},
		{`{"session_id": "s", "events": [{"role": "user", "content": "x", "ts": "yesterday"}]}`, "events[0].ts"},
		{`{"session_id": "s", "events": [], "messages": [{"role":"user","content":"x"}], "x": 1}`, ""},
		{`{"session_id": "s", "started_at": "2026-13-01", "events": [{"role": "user", "content": "x"}]}`, "started_at"},
	}
	for _, tt := range tests {
		_, err := ParseTranscript([]byte(tt.in), nil)
		if tt.want == "" {
			if err != nil {
				t.Errorf("ParseTranscript(%s) = %v", tt.in, err)
			}
			continue
		}
		if !IsInvalid(err) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseTranscript(%s) = %v, want EINVALID mentioning %q", tt.in, err, tt.want)
		}
	}
	norm := []struct {
		tr   Transcript
		want string
	}{
		{Transcript{Events: []Event{{Role: RoleUser, Content: "x"}}}, "session_id is required"},
		{Transcript{SessionID: "a/b", Events: []Event{{Role: RoleUser, Content: "x"}}}, "session_id"},
		{Transcript{SessionID: "s"}, "no events"},
		{Transcript{SessionID: "s", Events: []Event{{Role: "robot", Content: "x"}}}, "events[0].role"},
		{Transcript{SessionID: "s", Events: []Event{{Role: RoleUser}}}, "events[0] is empty"},
		{Transcript{SessionID: "s", Outcome: "meh", Events: []Event{{Role: RoleUser, Content: "x"}}}, "outcome"},
		{Transcript{SessionID: "s", Tenant: "bad tenant", Events: []Event{{Role: RoleUser, Content: "x"}}}, "tenant"},
	}
	for _, tt := range norm {
		err := tt.tr.Normalize(DefaultTenant, time.Now())
		if !IsInvalid(err) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Normalize(%+v) = %v, want EINVALID mentioning %q", tt.tr, err, tt.want)
		}
	}
}

// TestTimestampsOutOfRange refuses the zero time and overflowing numbers
// with an error that says "out of range", instead of replacing them
// silently or printing year -292275055.
func TestTimestampsOutOfRange(t *testing.T) {
	for _, ts := range []string{`"0001-01-01T00:00:00Z"`, `100000000000000000000`, `"100000000000000000000"`, `-5`, `"12000-01-01T00:00:00Z"`} {
		raw := `{"session_id": "s1", "events": [{"role": "user", "content": "hi", "ts": ` + ts + `}]}`
		_, err := ParseTranscript([]byte(raw), nil)
		if err == nil || !strings.Contains(ErrorMessage(err), "out of range") && !strings.Contains(ErrorMessage(err), "not an RFC 3339 time") {
			t.Errorf("ts %s: %v", ts, err)
		}
		if err != nil && strings.Contains(err.Error(), "-292") {
			t.Errorf("ts %s: the error shows an overflowed year: %v", ts, err)
		}
	}
	ok := `{"session_id": "s1", "events": [{"role": "user", "content": "hi", "ts": 1767225600}]}`
	if _, err := ParseTranscript([]byte(ok), nil); err != nil {
		t.Fatalf("Unix seconds: %v", err)
	}
}
