package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/runes"
	"github.com/hindsight-memory/hindsight/service"
)

func runSessionEnd(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("session-end", "--file FILE [flags]", `
End a session: send its transcript to a running Hindsight, which distils it
into an episode and memories. The file is a transcript in Hindsight's format
({"session_id", "events": [...]}) or OpenAI-style messages (see README).
Use --file - to read standard input. With --wait the command returns when
the memories are recallable, and prints what was learned.`, clientEnvs...)
	var c clientFlags
	c.register(fs)
	file := fs.String("file", "", "the transcript file (JSON), or - for stdin")
	sessionID := fs.String("session-id", "", "override the transcript's session_id")
	task := fs.String("task", "", "override the task description")
	outcome := fs.String("outcome", "", "override the outcome: success, partial, failure or unknown")
	wait := fs.Bool("wait", false, "wait until the session is distilled and its memories are recallable")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *file == "" {
		fs.Usage()
		return errUsage
	}
	var t memory.Transcript
	var err error
	if *file == "-" {
		var data []byte
		if data, err = io.ReadAll(os.Stdin); err != nil {
			return err
		}
		loc, err := timeZone()
		if err != nil {
			return err
		}
		if t, err = memory.ParseTranscript(data, loc); err != nil {
			return fmt.Errorf("%s: %s", *file, memory.ErrorMessage(err))
		}
	} else if t, err = readTranscriptFile(*file); err != nil {
		return err
	}
	if *sessionID != "" {
		t.SessionID = *sessionID
	}
	if *task != "" {
		t.Task = *task
	}
	if *outcome != "" {
		t.Outcome = memory.Outcome(*outcome)
	}
	if t.Tenant != "" {
		fmt.Fprintf(os.Stderr, "note: the transcript names tenant %q; the server takes the tenant from your token\n", t.Tenant)
	}
	if len(t.Dropped) > 0 || t.Cut > 0 {
		fmt.Fprintf(os.Stderr, "%s log: %d events; left out %s; %d long texts cut\n", t.Format, len(t.Events), t.DroppedSummary(), t.Cut)
	}
	res, err := c.endSession(ctx, t, endOptions{wait: *wait})
	if err != nil {
		return fmt.Errorf("%s: %w", *file, err)
	}
	if *asJSON {
		return printJSON(out, res)
	}
	fmt.Fprintf(out, "session %s: %s (workflow %s, %d events)\n", t.SessionID, res.Status, res.WorkflowID, res.Events)
	if res.EpisodeID != "" {
		fmt.Fprintf(out, "episode %s\n", res.EpisodeID)
	}
	for _, f := range res.Failures {
		fmt.Fprintf(out, "  failure: %s — %s\n", f.Attempt, f.Cause)
	}
	if len(res.Memories) > 0 {
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "MEMORY\tKIND\tVERDICT\tCONTENT")
		for _, m := range res.Memories {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.MemoryID, m.Kind, m.Verdict, runes.ClipLine(m.Content, 90))
		}
		tw.Flush()
	}
	if !*wait {
		fmt.Fprintln(out, "distillation runs in the background; use --wait to wait for it")
	}
	return nil
}

func runRecall(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("recall", `"QUERY" [flags]`, `
Recall the memories most relevant to QUERY from a running Hindsight, with
their provenance (source episodes). Prints the context block an agent would
get, then the results; --json prints everything.`, clientEnvs...)
	var c clientFlags
	c.register(fs)
	topK := fs.Int("top-k", 5, "how many memories to return (1-50)")
	kinds := fs.String("kind", "", "only these kinds, comma-separated: preference, lesson, fact, rule")
	taskType := fs.String("task-type", "", "only memories about this task type")
	entities := fs.String("entities", "", "only memories about any of these entities, comma-separated")
	cold := fs.Bool("include-cold", false, "also return decayed memories")
	superseded := fs.Bool("include-superseded", false, "also return superseded memories")
	withEvents := fs.Bool("with-events", false, "also return the raw event IDs behind each memory")
	user := fs.String("user", "", "recall for this user: their memories with the shared ones (without it, shared only)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	query := strings.Join(fs.Args(), " ")
	if strings.TrimSpace(query) == "" {
		fs.Usage()
		return errUsage
	}
	callArgs := map[string]any{"query": query, "top_k": *topK, "include_cold": *cold, "include_superseded": *superseded, "with_events": *withEvents}
	if *kinds != "" {
		callArgs["kinds"] = *kinds
	}
	if *taskType != "" {
		callArgs["task_type"] = *taskType
	}
	if *entities != "" {
		callArgs["entities"] = *entities
	}
	if *user != "" {
		callArgs["user_id"] = *user
	}
	var res mcpserver.RecallOutput
	if _, err := c.callTool(ctx, mcpserver.ToolRecall, callArgs, &res); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(out, res)
	}
	if len(res.Results) == 0 {
		fmt.Fprintln(out, "no memories found")
		return nil
	}
	fmt.Fprintln(out, terminalSafe(res.Context))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nMEMORY\tKIND\tSCOPE\tSCORE\tCONF\tEPISODES")
	for _, r := range res.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.3f\t%.2f\t%s\n", r.MemoryID, r.Kind, r.Scope, r.Score, r.Confidence, strings.Join(r.SourceEpisodes, ","))
	}
	return tw.Flush()
}

func runHistory(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("history", "MEMORY_ID [flags]", `
Show every version of a memory, oldest first, and the decisions (merges,
corrections, feedback, undos) behind them, from a running Hindsight.`, clientEnvs...)
	var c clientFlags
	c.register(fs)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	var h service.History
	if _, err := c.callTool(ctx, mcpserver.ToolHistory, map[string]any{"memory_id": fs.Arg(0)}, &h); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(out, h)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tUPDATED\tSTATUS\tCONF\tCONTENT\tREASON")
	for _, v := range h.Versions {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.2f\t%s\t%s\n", v.Version, v.UpdatedAt.Format(time.DateTime), v.Status, v.Confidence, runes.ClipLine(v.Content, 60), runes.ClipLine(v.Reason, 60))
	}
	fmt.Fprintln(tw, "\nDECISION\tWHEN\tACTION\tVERDICT\tREASON")
	for _, d := range h.Decisions {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.ID, d.CreatedAt.Format(time.DateTime), d.Action, d.Verdict, runes.ClipLine(d.Reason, 70))
	}
	return tw.Flush()
}

// terminalSafe shows control characters (other than newline and tab) as
// \xNN, so that text stored before they were stripped cannot move the
// cursor, clear the screen or retitle the terminal it is printed on.
func terminalSafe(s string) string {
	if memory.StripControls(s) == s {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if memory.StripControls(string(r)) == "" {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
