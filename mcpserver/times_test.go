package mcpserver

import (
	"context"
	"testing"
	"time"
	_ "time/tzdata"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/recall"
	"github.com/hindsight-memory/hindsight/service"
)

// recorder is a Backend that keeps what the tools passed it.
type recorder struct {
	Backend
	query memory.Query
	log   service.LogRequest
	end   service.EndRequest
}

func (r *recorder) Recall(_ context.Context, q memory.Query) (recall.Response, error) {
	r.query = q
	return recall.Response{}, nil
}

func (r *recorder) Log(_ context.Context, _ string, l service.LogRequest) (memory.Event, error) {
	r.log = l
	return memory.Event{}, nil
}

func (r *recorder) EndSession(_ context.Context, _ string, e service.EndRequest) (service.EndResponse, error) {
	r.end = e
	return service.EndResponse{}, nil
}

// TestOneRuleForTimesWithoutAZone gives every tool that takes a time the
// same wall-clock times without a zone, in a deployment in UTC and in one
// in Asia/Shanghai: each is read in the deployment's zone (a date as its
// midnight there), as recall reads time words, and a time that names its
// zone, or Unix seconds, means the same instant in both.
func TestOneRuleForTimesWithoutAZone(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	instant := time.Date(2026, 3, 1, 1, 30, 0, 0, time.UTC)
	for _, loc := range []*time.Location{time.UTC, shanghai} {
		t.Run(loc.String(), func(t *testing.T) {
			rec := &recorder{}
			tl := &tools{b: rec, loc: loc}
			ctx := context.Background()
			midnight := time.Date(2026, 3, 1, 0, 0, 0, 0, loc)
			nineThirty := time.Date(2026, 3, 1, 9, 30, 0, 0, loc)

			if _, _, err := tl.recall(ctx, "acme", args{"query": "reports", "since": "2026-03-01", "until": "2026-03-01T09:30:00"}); err != nil {
				t.Fatal(err)
			}
			if !rec.query.Since.Equal(midnight) || !rec.query.Until.Equal(nineThirty) {
				t.Errorf("since 2026-03-01, until 2026-03-01T09:30:00 = %v, %v; want %v, %v", rec.query.Since, rec.query.Until, midnight, nineThirty)
			}

			if _, _, err := tl.logEvent(ctx, "acme", args{"session_id": "s", "role": "user", "content": "hi", "ts": "2026-03-01 09:30"}); err != nil {
				t.Fatal(err)
			}
			if !rec.log.TS.Equal(nineThirty) {
				t.Errorf("memory_log ts 2026-03-01 09:30 = %v, want %v", rec.log.TS, nineThirty)
			}

			end := args{"session_id": "s", "started_at": "2026-03-01T09:30:00", "ended_at": "2026-03-01T01:30:00Z",
				"events": []any{
					map[string]any{"role": "user", "content": "zone-less", "ts": "2026-03-01T09:30:00"},
					map[string]any{"role": "user", "content": "with a zone", "ts": "2026-03-01T09:30:00+08:00"},
					map[string]any{"role": "user", "content": "unix seconds", "ts": float64(instant.Unix())},
				}}
			if _, _, err := tl.endSession(ctx, "acme", end); err != nil {
				t.Fatal(err)
			}
			if !rec.end.StartedAt.Equal(nineThirty) || !rec.end.EndedAt.Equal(instant) {
				t.Errorf("started_at, ended_at = %v, %v; want %v, %v", rec.end.StartedAt, rec.end.EndedAt, nineThirty, instant)
			}
			if len(rec.end.Events) != 3 {
				t.Fatalf("session_end passed %d events, want 3", len(rec.end.Events))
			}
			for i, want := range []time.Time{nineThirty, instant, instant} {
				if got := rec.end.Events[i].TS; !got.Equal(want) {
					t.Errorf("event %d (%s) ts = %v, want %v", i, rec.end.Events[i].Content, got, want)
				}
			}

			words, _, ok := recall.ParseTime("what did we decide yesterday", nineThirty.AddDate(0, 0, 1), loc)
			if !ok || !words.Since.Equal(midnight) {
				t.Errorf("\"yesterday\" on the 2nd begins at %v, want %v: time words and dates disagree", words.Since, midnight)
			}
		})
	}
}
