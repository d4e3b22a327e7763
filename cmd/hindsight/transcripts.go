package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/memory"
)

// readTranscriptFile reads a transcript file in any format
// memory.ParseTranscript knows. A Claude Code session is read with its
// subagents' logs, from the subagents/ folder beside it
// (<project>/<session>/subagents/*.jsonl), when there is one. Only
// regular files are read, within maxTranscriptBytes each (a longer log is
// read as its head and tail, counted as memory.DropLogCut) and
// transcriptReadTimeout.
func readTranscriptFile(path string) (memory.Transcript, error) {
	main, err := readRegularFile(path, maxTranscriptBytes, transcriptReadTimeout)
	if err != nil {
		return memory.Transcript{}, err
	}
	cuts := 0
	if main.cut {
		cuts++
	}
	loc, err := timeZone()
	if err != nil {
		return memory.Transcript{}, err
	}
	t, err := memory.ParseTranscript(main.data, loc)
	if err != nil {
		return memory.Transcript{}, fmt.Errorf("%s: %s", path, memory.ErrorMessage(err))
	}
	if t.Format == memory.FormatClaudeCode {
		subs, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(path, filepath.Ext(path)), "subagents", "*.jsonl"))
		if len(subs) > 0 {
			logs := make([][]byte, 0, len(subs))
			for _, s := range subs {
				b, err := readRegularFile(s, maxTranscriptBytes, transcriptReadTimeout)
				if err != nil {
					return memory.Transcript{}, err
				}
				if b.cut {
					cuts++
				}
				logs = append(logs, b.data)
			}
			if t, err = memory.ParseClaudeCode(main.data, loc, logs...); err != nil {
				return memory.Transcript{}, fmt.Errorf("%s: %s", path, memory.ErrorMessage(err))
			}
		}
	}
	if cuts > 0 {
		if t.Dropped == nil {
			t.Dropped = map[string]int{}
		}
		t.Dropped[memory.DropLogCut] += cuts
	}
	return t, nil
}

// endOptions are how a transcript is handed over.
type endOptions struct {
	wait     bool
	keepOpen bool   // store the events, distil later
	user     string // the session's user, when the transcript names none
	cwd      string // the directory the agent worked in, when the transcript names none
}

// endSession validates a transcript and sends it with session_end, the way
// an agent would.
func (c *clientFlags) endSession(ctx context.Context, t memory.Transcript, o endOptions) (mcpserver.EndOutput, error) {
	if t.UserID == "" {
		t.UserID = o.user
	}
	resolveProject(ctx, &t, o.cwd)
	// Validate here too, so a bad file fails before anything is sent.
	probe := t
	probe.Events = append([]memory.Event(nil), t.Events...)
	if err := probe.Normalize(memory.DefaultTenant, time.Now()); err != nil {
		return mcpserver.EndOutput{}, fmt.Errorf("%s", memory.ErrorMessage(err))
	}
	args := map[string]any{"session_id": t.SessionID, "events": eventArgs(t.Events), "wait": o.wait}
	if o.keepOpen {
		args["keep_open"] = true
	}
	for k, v := range map[string]string{"task": t.Task, "outcome": string(t.Outcome), "user_id": t.UserID, "agent": t.Agent, "project": t.Project, "project_name": t.ProjectName} {
		if v != "" {
			args[k] = v
		}
	}
	for k, v := range map[string]time.Time{"started_at": t.StartedAt, "ended_at": t.EndedAt} {
		if !v.IsZero() {
			args[k] = v.Format(time.RFC3339Nano)
		}
	}
	var res mcpserver.EndOutput
	_, err := c.callTool(ctx, mcpserver.ToolEnd, args, &res)
	return res, err
}

// eventArgs are events as session_end's events argument takes them.
func eventArgs(es []memory.Event) []map[string]any {
	out := make([]map[string]any, 0, len(es))
	for _, e := range es {
		ev := map[string]any{"role": string(e.Role), "content": e.Content}
		if !e.TS.IsZero() {
			ev["ts"] = e.TS.Format(time.RFC3339Nano)
		}
		for k, v := range map[string]string{"tool_name": e.ToolName, "tool_args": e.ToolArgs, "tool_result": e.ToolResult, "error": e.Error, "call_id": e.CallID} {
			if v != "" {
				ev[k] = v
			}
		}
		out = append(out, ev)
	}
	return out
}
