package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"

	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/memory"
)

// TestPayloadsEncrypted ends a session with HINDSIGHT_PAYLOAD_KEY set and
// reads the Temporal histories it wrote (the session's workflow and the
// tenant's ledger, which carries the candidate memories) through the
// Temporal client, raw: no memory text and no transcript text is there in
// plaintext, while the service still answers with it.
func TestPayloadsEncrypted(t *testing.T) {
	t.Setenv("HINDSIGHT_PAYLOAD_KEY", "0123456789abcdef-test-payload-key")
	st := startTestDev(t, filepath.Join(t.TempDir(), "data"))
	defer st.Close()
	session := connect(t, st.mcpURL())
	tr, evs := transcriptEvents(t, "01_csv_import_gbk.json")
	end := call[mcpserver.EndOutput](t, session, mcpserver.ToolEnd, map[string]any{
		"session_id": tr.SessionID, "events": evs, "wait": true, "task": "Import sales_2024.csv into the warehouse",
	})
	if end.Status != "completed" || len(end.Memories) == 0 {
		t.Fatalf("session_end = %+v", end)
	}
	var plain []string
	for _, m := range end.Memories {
		plain = append(plain, m.Content)
	}
	plain = append(plain, "Import sales_2024.csv into the warehouse")

	ctx := context.Background()
	for _, id := range []string{memory.SessionWorkflowID(memory.DefaultTenant, tr.SessionID), ledger.WorkflowID(memory.DefaultTenant)} {
		it := st.client.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		var raw strings.Builder
		n := 0
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatalf("history of %s: %v", id, err)
			}
			b, _ := proto.Marshal(ev)
			raw.Write(b)
			n++
		}
		if n == 0 {
			t.Fatalf("no history for %s", id)
		}
		for _, p := range plain {
			if strings.Contains(raw.String(), p) {
				t.Errorf("the history of %s holds %q in plaintext", id, p)
			}
		}
		if !strings.Contains(raw.String(), "binary/encrypted") {
			t.Errorf("the history of %s holds no encrypted payload", id)
		}
	}
}
