package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hindsight-memory/hindsight/eval/scenarios"
	"github.com/hindsight-memory/hindsight/llm/offline"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/runes"
)

func runExtract(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("extract", "--file FILE | --scenarios FILE --session ID [flags]", `
Distil a transcript with the offline extractor, without storing anything,
and print the episode and the candidate memories it would hand to the
merge: what session-end would learn from it, before merging. Reads a
transcript file (Hindsight's format or OpenAI messages), or one session
of a scenario corpus.`)
	file := fs.String("file", "", "the transcript file (JSON), or - for stdin")
	corpus := fs.String("scenarios", "", "a scenario corpus to take the session from")
	session := fs.String("session", "", "with --scenarios: the session ID (all sessions of a scenario when it names the scenario)")
	asJSON := fs.Bool("json", false, "print the extraction as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	var ts []memory.Transcript
	switch {
	case *file != "":
		var data []byte
		var err error
		if *file == "-" {
			data, err = io.ReadAll(os.Stdin)
		} else {
			data, err = os.ReadFile(*file)
		}
		if err != nil {
			return err
		}
		loc, err := timeZone()
		if err != nil {
			return err
		}
		t, err := memory.ParseTranscript(data, loc)
		if err != nil {
			return fmt.Errorf("%s: %s", *file, memory.ErrorMessage(err))
		}
		ts = append(ts, t)
	case *corpus != "" && *session != "":
		c, err := scenarios.Load(*corpus)
		if err != nil {
			return err
		}
		for _, s := range c.Scenarios {
			for _, ss := range s.Sessions {
				if ss.Transcript.SessionID == *session || s.ID == *session {
					ts = append(ts, ss.Transcript)
				}
			}
		}
		if len(ts) == 0 {
			return fmt.Errorf("no session or scenario %q in %s", *session, *corpus)
		}
	default:
		fs.Usage()
		return errUsage
	}
	x := offline.NewExtractor()
	for _, t := range ts {
		if err := t.Normalize(memory.DefaultTenant, time.Now().UTC()); err != nil {
			return err
		}
		e, err := x.Extract(ctx, t)
		if err != nil {
			return err
		}
		if *asJSON {
			if err := printJSON(out, e); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(out, "session %s: task %q (%s), outcome %s, %d steps, %d failures\n", t.SessionID, e.Episode.Task, e.Episode.TaskType, e.Episode.Outcome, len(e.Episode.Steps), len(e.Episode.Failures))
		for _, f := range e.Episode.Failures {
			fmt.Fprintf(out, "  failure: %s — %s\n", runes.ClipLine(f.Attempt, 100), runes.ClipLine(f.Cause, 100))
		}
		for _, c := range e.Candidates {
			fmt.Fprintf(out, "  %-10s %s", c.Kind, c.Content)
			if c.Signal != "" {
				fmt.Fprintf(out, " [%s]", c.Signal)
			}
			fmt.Fprintln(out)
			if c.CounterExample != "" {
				fmt.Fprintf(out, "             counter-example: %s\n", strings.TrimSpace(c.CounterExample))
			}
		}
		if len(e.Candidates) == 0 {
			fmt.Fprintln(out, "  (no candidate memories)")
		}
	}
	return nil
}
