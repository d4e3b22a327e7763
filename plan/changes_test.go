package plan

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/internal/memtest"
	"github.com/hindsight-memory/hindsight/memory"
)

func op(id string, now time.Time) Op { return Op{DecisionID: id, WorkflowID: "wf", Now: now} }

func TestPlanCorrect(t *testing.T) {
	m := memtest.Stored("mem_a", memory.KindPreference, "Reports should use UTC.", "ep_1")
	now := t0.Add(time.Hour)

	d, err := Correct(op("dec-c", now), m, "Reports should use UTC and ISO 8601 dates.", false)
	if err != nil {
		t.Fatal(err)
	}
	n := d.After[0]
	if n.Version != 2 || n.Content != "Reports should use UTC and ISO 8601 dates." ||
		n.ContentHash != memory.ContentHash(m.Kind, n.Content) || !slices.Contains(n.Flags, memory.FlagUserStated) ||
		d.Action != memory.ActionCorrect || !reflect.DeepEqual(d.Before, []memory.Memory{m}) {
		t.Errorf("corrected: %+v", d)
	}

	d, err = Correct(op("dec-c", now), m, "  reports should use utc ", false)
	if err != nil || len(d.After) != 0 {
		t.Errorf("same text: want a no-op, got %d versions, err %v", len(d.After), err)
	}

	d, err = Correct(op("dec-o", now), m, "", true)
	if err != nil {
		t.Fatal(err)
	}
	n = d.After[0]
	if n.Status != memory.StatusSuperseded || !n.ValidTo.Equal(now) || n.Content != m.Content || n.Confidence != 0.25 {
		t.Errorf("outdated: status %s valid_to %v confidence %v", n.Status, n.ValidTo, n.Confidence)
	}
	if d, _ := Correct(op("dec-o2", now), n, "", true); len(d.After) != 0 {
		t.Error("marking an outdated memory outdated again must be a no-op")
	}
	if d, _ := Correct(op("dec-o", now), n, "", true); len(d.After) != 0 || !strings.Contains(d.Reason, "already wrote") {
		t.Errorf("retry of the same decision must be a no-op: %q", d.Reason)
	}

	forgotten := m
	forgotten.Status = memory.StatusForgotten
	for name, call := range map[string]func() error{
		"neither":   func() error { _, err := Correct(op("d", now), m, " ", false); return err },
		"both":      func() error { _, err := Correct(op("d", now), m, "x", true); return err },
		"forgotten": func() error { _, err := Correct(op("d", now), forgotten, "x", false); return err },
		"no time":   func() error { _, err := Correct(op("d", time.Time{}), m, "x", false); return err },
	} {
		if err := call(); !memory.IsInvalid(err) {
			t.Errorf("%s: err %v, want EINVALID", name, err)
		}
	}
}

func TestPlanFeedbackMovesConfidenceAndCountsAsUse(t *testing.T) {
	m := memtest.Stored("mem_a", memory.KindLesson, "Batch inserts into ClickHouse.", "ep_1", "ep_2", "ep_3")
	m.Decay, m.DecayAnchor, m.Status = 0.28, t0, memory.StatusCold
	now := t0.Add(3 * 24 * time.Hour)

	d, err := Feedback(op("dec-f1", now), m, true)
	if err != nil {
		t.Fatal(err)
	}
	n := d.After[0]
	if n.Helped != 1 || n.Hurt != 0 || m.Confidence != 0.8 || n.Confidence != 0.85 {
		t.Errorf("helped: helped %d hurt %d confidence %v → %v, want 0.8 → 0.85", n.Helped, n.Hurt, m.Confidence, n.Confidence)
	}
	if n.Decay != 0.38 || !n.DecayAnchor.Equal(now) || n.Status != memory.StatusLive {
		t.Errorf("a use must add the boost and revive the cold memory: decay %v anchor %v status %s", n.Decay, n.DecayAnchor, n.Status)
	}

	d, err = Feedback(op("dec-f2", now), n, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.After[0].Confidence; got != 0.9 {
		t.Errorf("second success: confidence %v, want the cap 0.9", got)
	}
	d, _ = Feedback(op("dec-f3", now), d.After[0], true)
	if got := d.After[0].Confidence; got != 0.9 {
		t.Errorf("third success: confidence %v, must stay at the evidence cap 0.9", got)
	}

	d, err = Feedback(op("dec-f4", now), m, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := d.After[0]; n.Hurt != 1 || n.Confidence != 0.7 {
		t.Errorf("failure: hurt %d confidence %v, want 1 and 0.7", n.Hurt, n.Confidence)
	}

	if d, _ := Feedback(op("dec-f1", now), n, true); len(d.After) != 0 {
		t.Error("feedback retried after its write must be a no-op")
	}
	forgotten := m
	forgotten.Status = memory.StatusForgotten
	if _, err := Feedback(op("d", now), forgotten, true); !memory.IsInvalid(err) {
		t.Errorf("feedback on a forgotten memory: err %v, want EINVALID", err)
	}
}

func TestPlanDecaySweepsNeverDrift(t *testing.T) {
	week := 7 * 24 * time.Hour
	orig := memtest.Stored("mem_a", memory.KindFact, "The data warehouse is ClickHouse.", "ep_1")
	lc := memory.DefaultLifecycle

	cases := []struct {
		at   time.Duration
		want memory.Status
	}{
		{0, memory.StatusLive},
		{11 * week, memory.StatusLive},                // 0.9^11 = 0.314
		{12 * week, memory.StatusCold},                // 0.9^12 = 0.282
		{12*week + 3*24*time.Hour, memory.StatusCold}, // same period
		{21 * week, memory.StatusCold},                // 0.9^21 = 0.109
		{22 * week, memory.StatusArchived},            // 0.9^22 = 0.098
		{40 * week, memory.StatusArchived},
	}
	// Sweep daily, writing each planned version, and compare with the
	// status computed once from the original memory: they must agree on
	// every day, whatever the sweep history.
	cur := orig
	sweeps := 0
	for day := 0; day <= 40*7; day++ {
		now := t0.Add(time.Duration(day) * 24 * time.Hour)
		d, err := Decay(op("dec-decay-"+now.Format("20060102"), now), cur)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.After) == 1 {
			cur = d.After[0]
			sweeps++
		}
		if want := lc.StatusAt(orig, now); cur.Status != want {
			t.Fatalf("day %d: swept status %s, direct %s", day, cur.Status, want)
		}
		if cur.Decay != orig.Decay || !cur.DecayAnchor.Equal(orig.DecayAnchor) {
			t.Fatalf("day %d: a sweep moved the decay anchor (%v at %v)", day, cur.Decay, cur.DecayAnchor)
		}
		// Sweeping again at the same time changes nothing.
		if again, _ := Decay(op("dec-again", now), cur); len(again.After) != 0 {
			t.Fatalf("day %d: second sweep planned %+v", day, again.After)
		}
	}
	if sweeps != 2 || cur.Version != 3 {
		t.Errorf("%d status changes, version %d; want 2 (cold, archived) and version 3", sweeps, cur.Version)
	}
	for _, c := range cases {
		if got := lc.StatusAt(orig, t0.Add(c.at)); got != c.want {
			t.Errorf("at %v: %s, want %s", c.at, got, c.want)
		}
	}

	pinned := orig
	pinned.Pinned = true
	if d, _ := Decay(op("dec-p", t0.Add(100*week)), pinned); len(d.After) != 0 {
		t.Error("a pinned memory must never decay")
	}
	superseded := orig
	superseded.Status = memory.StatusSuperseded
	if d, _ := Decay(op("dec-s", t0.Add(100*week)), superseded); len(d.After) != 0 {
		t.Error("a superseded memory keeps its status")
	}
}

func conflictDecision(t *testing.T) (memory.Decision, map[string]memory.Memory, memory.Memory) {
	t.Helper()
	old := memtest.Stored("mem_a", memory.KindPreference, "Reports should use UTC timestamps.", "ep_1", "ep_2")
	in := mergeInput(memory.Candidate{Kind: memory.KindPreference, Content: "Reports should use Beijing time (UTC+8) timestamps."},
		"ep_3", memory.VerdictConflicts, "mem_a", old)
	d, err := Merge(in)
	if err != nil {
		t.Fatal(err)
	}
	current := map[string]memory.Memory{}
	for _, m := range d.After {
		current[m.ID] = m
	}
	return d, current, old
}

func TestPlanUndoRestoresExactPreviousState(t *testing.T) {
	d, current, old := conflictDecision(t)
	newID := d.After[1].ID
	now := t0.Add(72 * time.Hour)
	u, err := Undo(op("dec-undo", now), d, current, false)
	if err != nil {
		t.Fatal(err)
	}
	if u.Action != memory.ActionUndo || u.Undoes != d.ID || len(u.Before) != 2 || len(u.After) != 2 {
		t.Fatalf("undo decision: %+v", u)
	}
	restored := u.After[0]
	want := old
	want.Version, want.UpdatedAt, want.DecisionID = 3, now, "dec-undo"
	want.Reason = "undo of dec-1: restored version 1"
	if !reflect.DeepEqual(restored, want) {
		t.Errorf("restored\n got %+v\nwant %+v", restored, want)
	}
	retired := u.After[1]
	if retired.ID != newID || retired.Version != 2 || retired.Status != memory.StatusForgotten || !retired.ValidTo.Equal(now) {
		t.Errorf("the superseding memory must be retired (forgotten): %+v", retired)
	}

	// Retried after its write, the undo is a no-op.
	for _, m := range u.After {
		current[m.ID] = m
	}
	again, err := Undo(op("dec-undo", now), d, current, false)
	if err != nil || len(again.After) != 0 {
		t.Errorf("undo retried: %d versions, err %v; want a no-op", len(again.After), err)
	}
	// Undoing the undo re-applies the conflict.
	redo, err := Undo(op("dec-redo", now), u, current, false)
	if err != nil {
		t.Fatal(err)
	}
	if redo.After[0].Status != memory.StatusSuperseded || redo.After[0].SupersededBy != newID || redo.After[1].Status != memory.StatusLive {
		t.Errorf("redo: %+v", redo.After)
	}
}

func TestPlanUndoRefusesAfterLaterChange(t *testing.T) {
	d, current, _ := conflictDecision(t)
	newID := d.After[1].ID
	later := current[newID]
	later.Version, later.DecisionID, later.Sources = 2, "dec-later", append(slices.Clone(later.Sources), "ep_4")
	current[newID] = later

	_, err := Undo(op("dec-undo", t0.Add(96*time.Hour)), d, current, false)
	if memory.ErrorCode(err) != memory.ECONFLICT || !strings.Contains(err.Error(), "dec-later") {
		t.Fatalf("err %v, want ECONFLICT naming dec-later", err)
	}

	u, err := Undo(op("dec-undo", t0.Add(96*time.Hour)), d, current, true)
	if err != nil {
		t.Fatal(err)
	}
	if n := u.After[1]; n.Version != 3 || n.Status != memory.StatusForgotten || !strings.HasPrefix(u.Reason, "forced") {
		t.Errorf("forced undo: %+v (%s)", n, u.Reason)
	}

	delete(current, newID)
	if _, err := Undo(op("dec-undo", t0), d, current, true); !memory.IsNotFound(err) {
		t.Errorf("missing memory: err %v, want ENOTFOUND", err)
	}
	noop := d
	noop.After = nil
	if _, err := Undo(op("dec-undo", t0), noop, current, false); !memory.IsInvalid(err) {
		t.Errorf("undo of a no-op: err %v, want EINVALID", err)
	}
}
