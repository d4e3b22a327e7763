package scenarios

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/runes"
)

// System is Hindsight as a scenario lives through it. Each scenario gets a
// tenant of its own, fresh for the run.
type System interface {
	// EndSession ends the session t in tenant and returns once the
	// memories it distilled are recallable: the memory each candidate
	// ended in (inserted, merged into, or superseding another), current
	// versions, each once.
	EndSession(ctx context.Context, tenant string, t memory.Transcript) ([]memory.Memory, error)
	// Memories returns the current version of every memory of tenant, in
	// every status.
	Memories(ctx context.Context, tenant string) ([]memory.Memory, error)
	// Recall answers a probe with the service's defaults, best first.
	Recall(ctx context.Context, tenant string, p Probe) ([]memory.Memory, error)
}

// Options tune a run.
type Options struct {
	// Only runs just the scenarios with these IDs (all when empty).
	Only []string
	// Parallel is how many scenarios run at once (1 when ≤ 0). Scenarios
	// never share a tenant, so the order of sessions within each is kept.
	Parallel int
	// RunID makes the run's tenants unique (for a system that keeps
	// earlier runs' data). Empty means the run's start time.
	RunID string
	// Corpus names the corpus in the report.
	Corpus string
}

// CheckType names what a check verifies.
type CheckType string

// The checks, in report order.
const (
	CheckExpect  CheckType = "expect"   // an expected memory was distilled
	CheckNoise   CheckType = "noise"    // a session stayed within max_memories
	CheckLive    CheckType = "live"     // final: a live memory matches
	CheckNotLive CheckType = "not_live" // final: no live memory matches
	CheckOnce    CheckType = "once"     // final: exactly one live memory matches
	CheckMaxLive CheckType = "max_live" // final: at most so many live memories
	CheckTop1    CheckType = "top1"     // probe: the first result matches
	CheckTop3    CheckType = "top3"     // probe: one of the first three matches
	CheckForbid  CheckType = "forbid"   // probe: no result matches a forbidden memory
	CheckNone    CheckType = "none"     // probe: nothing is returned
)

// Check is one verified expectation.
type Check struct {
	Scenario string    `json:"scenario"`
	Type     CheckType `json:"type"`
	// Where says which session or probe it is about.
	Where string `json:"where,omitempty"`
	Want  string `json:"want"`
	Pass  bool   `json:"pass"`
	// Found is what was found instead, for a failed check.
	Found string `json:"found,omitempty"`
	// CrossLang marks a probe asked in the other language from its
	// scenario's (a Chinese question in an English scenario, or the
	// reverse).
	CrossLang bool `json:"cross_lang,omitempty"`
}

// crossLang reports whether a query is in the other language from a
// scenario's: Chinese in an English scenario, none in a Chinese one.
// Mixed scenarios have no other language.
func crossLang(lang, query string) bool {
	zh := strings.IndexFunc(query, runes.IsCJK) >= 0
	return lang == "en" && zh || lang == "zh" && !zh
}

// Run runs every scenario of c on sys and reports. A scenario that cannot
// run (a session end fails) fails the checks it could not make, with the
// error as what was found; the others still run. Run fails only when ctx
// ends.
func Run(ctx context.Context, sys System, c Corpus, opts Options) (Report, error) {
	start := time.Now()
	if opts.RunID == "" {
		opts.RunID = start.UTC().Format("20060102T150405.000000000")
	}
	var todo []Scenario
	for _, s := range c.Scenarios {
		if len(opts.Only) == 0 || slices.Contains(opts.Only, s.ID) {
			todo = append(todo, s)
		}
	}
	if len(opts.Only) > 0 && len(todo) != len(opts.Only) {
		var missing []string
		for _, id := range opts.Only {
			if !slices.ContainsFunc(todo, func(s Scenario) bool { return s.ID == id }) {
				missing = append(missing, id)
			}
		}
		return Report{}, fmt.Errorf("no scenario with id %s in the corpus", strings.Join(missing, ", "))
	}
	results := make([]scenarioResult, len(todo))
	par := max(1, opts.Parallel)
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i, s := range todo {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = runScenario(ctx, sys, s, TenantFor(opts.RunID, s.ID))
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Report{}, err
	}
	return buildReport(opts.Corpus, todo, results, time.Since(start)), nil
}

// TenantFor is the tenant a scenario runs in: a readable prefix of its ID
// and a hash of the run and the ID, within the 64 characters a tenant may
// have.
func TenantFor(runID, scenarioID string) string {
	sum := sha256.Sum256([]byte(runID + "\x00" + scenarioID))
	prefix := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '-'
	}, scenarioID)
	if len(prefix) > 40 {
		prefix = prefix[:40]
	}
	return "scn-" + prefix + "-" + hex.EncodeToString(sum[:6])
}

type scenarioResult struct {
	checks   []Check
	sessions int
	took     time.Duration
}

func runScenario(ctx context.Context, sys System, s Scenario, tenant string) scenarioResult {
	start := time.Now()
	r := scenarioResult{}
	add := func(c Check) {
		c.Scenario = s.ID
		r.checks = append(r.checks, c)
	}
	var failed error // a session that could not end: later checks say so
	for _, ss := range s.Sessions {
		where := "session " + ss.Transcript.SessionID
		var got []memory.Memory
		if failed == nil {
			var err error
			got, err = sys.EndSession(ctx, tenant, ss.Transcript)
			if err != nil {
				failed = fmt.Errorf("%s could not end: %w", where, err)
			}
			r.sessions++
		}
		for _, m := range ss.Expect {
			c := Check{Type: CheckExpect, Where: where, Want: "distil " + m.String()}
			switch {
			case failed != nil:
				c.Found = failed.Error()
			case slices.ContainsFunc(got, m.Matches):
				c.Pass = true
			default:
				c.Found = "distilled " + describeAll(got)
			}
			add(c)
		}
		if ss.MaxMemories != nil {
			c := Check{Type: CheckNoise, Where: where, Want: fmt.Sprintf("distil at most %d memories", *ss.MaxMemories)}
			switch {
			case failed != nil:
				c.Found = failed.Error()
			case len(got) <= *ss.MaxMemories:
				c.Pass = true
			default:
				c.Found = fmt.Sprintf("distilled %d: %s", len(got), describeAll(got))
			}
			add(c)
		}
	}

	if f := s.Final; f != nil {
		var live []memory.Memory
		err := failed
		if err == nil {
			var all []memory.Memory
			if all, err = sys.Memories(ctx, tenant); err == nil {
				for _, m := range all {
					if m.Status == memory.StatusLive {
						live = append(live, m)
					}
				}
			}
		}
		final := func(t CheckType, want string, ok func() (bool, string)) {
			c := Check{Type: t, Where: "final state", Want: want}
			if err != nil {
				c.Found = err.Error()
			} else if pass, found := ok(); pass {
				c.Pass = true
			} else {
				c.Found = found
			}
			add(c)
		}
		for _, m := range f.Live {
			final(CheckLive, m.String()+" is live", func() (bool, string) {
				return slices.ContainsFunc(live, m.Matches), "live: " + describeAll(live)
			})
		}
		for _, m := range f.NotLive {
			final(CheckNotLive, "no "+strings.TrimPrefix(strings.TrimPrefix(m.String(), "a "), "an ")+" is live", func() (bool, string) {
				hits := filterMemories(live, m.Matches)
				return len(hits) == 0, "live: " + describeAll(hits)
			})
		}
		for _, m := range f.Once {
			final(CheckOnce, "exactly one live "+strings.TrimPrefix(m.String(), "a "), func() (bool, string) {
				hits := filterMemories(live, m.Matches)
				return len(hits) == 1, fmt.Sprintf("%d live: %s", len(hits), describeAll(hits))
			})
		}
		if f.MaxLive != nil {
			final(CheckMaxLive, fmt.Sprintf("at most %d live memories", *f.MaxLive), func() (bool, string) {
				return len(live) <= *f.MaxLive, fmt.Sprintf("%d live: %s", len(live), describeAll(live))
			})
		}
	}

	// The live memories, for telling apart a probe whose answer recall
	// missed from one whose answer was never stored.
	var live []memory.Memory
	if failed == nil && len(s.Probes) > 0 {
		if all, err := sys.Memories(ctx, tenant); err == nil {
			for _, m := range all {
				if m.Status == memory.StatusLive && (m.Scope.Kind() == memory.ScopeShared || m.Scope.Owner() == "") {
					live = append(live, m)
				}
			}
		}
	}
	for _, p := range s.Probes {
		where := fmt.Sprintf("probe %q", p.Query)
		if p.UserID != "" {
			where += " for user " + p.UserID
		}
		var got []memory.Memory
		err := failed
		if err == nil {
			got, err = sys.Recall(ctx, tenant, p)
		}
		probe := func(t CheckType, want string, ok func() (bool, string)) {
			c := Check{Type: t, Where: where, Want: want, CrossLang: crossLang(s.Lang, p.Query)}
			if err != nil {
				c.Found = err.Error()
			} else if pass, found := ok(); pass {
				c.Pass = true
			} else {
				c.Found = found
			}
			add(c)
		}
		if p.Top1 != nil {
			m := *p.Top1
			probe(CheckTop1, "first result is "+m.String(), func() (bool, string) {
				if len(got) > 0 && m.Matches(got[0]) {
					return true, ""
				}
				return false, rankedFound(got, m, live)
			})
		}
		if p.Top3 != nil {
			m := *p.Top3
			probe(CheckTop3, "one of the first three results is "+m.String(), func() (bool, string) {
				if slices.ContainsFunc(got[:min(3, len(got))], m.Matches) {
					return true, ""
				}
				return false, rankedFound(got, m, live)
			})
		}
		if len(p.Forbid) > 0 {
			var wants []string
			for _, m := range p.Forbid {
				wants = append(wants, m.String())
			}
			probe(CheckForbid, "no result is "+strings.Join(wants, ", or "), func() (bool, string) {
				for i, g := range got {
					for _, m := range p.Forbid {
						if m.Matches(g) {
							return false, fmt.Sprintf("result %d: %s", i+1, describe(g))
						}
					}
				}
				return true, ""
			})
		}
		if p.None {
			probe(CheckNone, "no result (nothing stored is relevant)", func() (bool, string) {
				return len(got) == 0, fmt.Sprintf("%d results: %s", len(got), describeAll(got))
			})
		}
	}
	r.took = time.Since(start)
	return r
}

func filterMemories(ms []memory.Memory, keep func(memory.Memory) bool) []memory.Memory {
	var out []memory.Memory
	for _, m := range ms {
		if keep(m) {
			out = append(out, m)
		}
	}
	return out
}

// rankedFound says what recall returned instead, where the wanted memory
// was if it was returned at all, and, if not, whether a live memory of
// the shared space (live) is the one wanted: recall missed it, or it was
// never stored.
func rankedFound(got []memory.Memory, m Matcher, live []memory.Memory) string {
	s := "no results"
	at := slices.IndexFunc(got, m.Matches)
	if len(got) > 0 {
		s = "first: " + describe(got[0])
		if at > 0 {
			return s + fmt.Sprintf("; the wanted memory came at rank %d", at+1)
		}
		s += fmt.Sprintf("; not among the %d results", len(got))
	}
	if i := slices.IndexFunc(live, m.Matches); i >= 0 {
		return s + "; live but not returned: " + describe(live[i])
	}
	if live != nil {
		return s + "; no live shared memory is the one wanted"
	}
	return s
}

// describe is a memory in one line: kind, status when not live, content.
func describe(m memory.Memory) string {
	s := "(" + string(m.Kind)
	if m.Status != memory.StatusLive && m.Status != "" {
		s += ", " + string(m.Status)
	}
	s += ") " + runes.ClipLine(m.Content, 160)
	if m.Kind == memory.KindLesson && m.CounterExample != "" {
		s += " [counter-example: " + runes.ClipLine(m.CounterExample, 80) + "]"
	}
	return s
}

func describeAll(ms []memory.Memory) string {
	if len(ms) == 0 {
		return "nothing"
	}
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = describe(m)
	}
	sort.Strings(parts)
	return strings.Join(parts, " | ")
}
