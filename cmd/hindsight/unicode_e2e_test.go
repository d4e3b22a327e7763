package main

import (
	"path/filepath"
	"testing"

	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/memory"
)

// TestUnicodeSessionIDs logs and ends sessions whose IDs are not ASCII:
// what memory_log accepts, session_end distils.
func TestUnicodeSessionIDs(t *testing.T) {
	st := startTestDev(t, filepath.Join(t.TempDir(), "data"))
	defer st.Close()
	session := connect(t, st.mcpURL())
	for _, id := range []string{"会话-1", "sess-é", "🚀 launch"} {
		call[mcpserver.LogOutput](t, session, mcpserver.ToolLog, map[string]any{"session_id": id, "role": "user", "content": "From now on, always give report timestamps in UTC."})
		end := call[mcpserver.EndOutput](t, session, mcpserver.ToolEnd, map[string]any{"session_id": id, "wait": true})
		if end.Status != "completed" || end.EpisodeID != memory.EpisodeID(memory.DefaultTenant, id) {
			t.Fatalf("session_end of %q = %+v", id, end)
		}
	}
}
