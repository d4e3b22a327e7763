package consolidate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/runes"
)

// OfflineModel is the Extractor recorded on typical episodes written by
// the offline summariser.
const OfflineModel = "offline-consolidate"

// Limits of a typical episode: what one summary keeps, and how long each
// line may be.
const (
	maxSummarySteps    = 12
	maxSummaryFailures = 10
	maxSummaryEntities = 12
	maxSummaryFeedback = 5
	maxTaskRunes       = 300
	maxStepRunes       = 200
	maxFailureRunes    = 300
	maxFeedbackRunes   = 300
)

// SummaryID is the ID of the typical episode standing for the episodes
// memberIDs of tenant. It depends on the set of members only, so a retried
// or repeated consolidation of the same cluster rewrites the same episode.
func SummaryID(tenant string, memberIDs []string) string {
	ids := slices.Clone(memberIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	h := sha256.New()
	h.Write([]byte(tenant))
	h.Write([]byte{0})
	for _, id := range ids {
		h.Write([]byte(id))
		h.Write([]byte{0})
	}
	return "ep_sum_" + hex.EncodeToString(h.Sum(nil))[:24]
}

// Summary is a typical episode with how it was written.
type Summary struct {
	Episode memory.Episode
	// Model is OfflineModel or the LLM model that wrote the summary.
	Model string
	// PromptVersion is SummaryPromptVersion when a model wrote it.
	PromptVersion string
	Usage         memory.TokenUsage
	// Fallback says why the offline summary stands in for the model's
	// answer, wholly or for some fields; "" when it does not.
	Fallback string
}

// Summarizer writes the typical episode of a cluster.
type Summarizer interface {
	// Summarize returns the typical episode of members, which must be
	// episodes of tenant (live or cold, not summaries, each ID once), at
	// least one. now is the time the summary is written (workflow time).
	// The episode has Status memory.EpisodeSummary, ID SummaryID(tenant,
	// member IDs) and SourceEpisodes the sorted member IDs. Invalid input
	// returns EINVALID; a failing model call returns its error wrapped.
	Summarize(ctx context.Context, tenant string, members []memory.Episode, now time.Time) (Summary, error)
}

// Offline is the Summarizer that needs no model: SummarizeOffline.
type Offline struct{}

var _ Summarizer = Offline{}

// Summarize implements Summarizer with SummarizeOffline.
func (Offline) Summarize(ctx context.Context, tenant string, members []memory.Episode, now time.Time) (Summary, error) {
	if err := ctx.Err(); err != nil {
		return Summary{}, err
	}
	ep, err := SummarizeOffline(tenant, members, now)
	if err != nil {
		return Summary{}, err
	}
	return Summary{Episode: ep, Model: OfflineModel}, nil
}

// SummarizeOffline writes the typical episode of members by counting what
// they share, without a model:
//
//   - Task: the members' representative task (the one sharing the most
//     words with the others).
//   - Steps: the steps seen in at least two members (one in a cluster of
//     one), each with how many members show it, "(5/7)"; most common
//     first, ties by first appearance. Steps that differ only in their
//     result, or in a file or service name with the same settings, count
//     as one (see sameAction); the most common wording is shown.
//   - Failures: recurring failed attempts with their cause, the attempt
//     ending with its count; an attempt counts with another when it is the
//     same action failing with the same error.
//   - Outcome: the majority of the known outcomes (see digest.outcome).
//   - Feedback: first a line with the outcome counts and the date range
//     ("outcomes: 6 success, 1 failure; 2026-01-03 → 2026-02-20"), in
//     Chinese when the tasks are Chinese, then recurring user feedback
//     with counts.
//   - Entities: those of at least two members, most common first.
//   - StartedAt and EndedAt span the members, EventCount is their sum,
//     UserID and Agent are kept when all members share them.
//
// The result depends on the set of members, not their order. Errors
// (EINVALID): no members, an invalid tenant, a member of another tenant,
// without ID, given twice, or itself a summary.
func SummarizeOffline(tenant string, members []memory.Episode, now time.Time) (memory.Episode, error) {
	if err := validateMembers("consolidate: summarize", tenant, members); err != nil {
		return memory.Episode{}, err
	}
	return newDigest(members).offlineEpisode(tenant, now), nil
}

func validateMembers(op, tenant string, members []memory.Episode) error {
	if err := memory.ValidateTenant(op, tenant); err != nil {
		return err
	}
	if len(members) == 0 {
		return memory.Invalidf(op, "no member episodes: a cluster needs at least one")
	}
	seen := make(map[string]bool, len(members))
	for i, ep := range members {
		switch {
		case ep.Tenant != tenant:
			return memory.Invalidf(op, "member %d (%s) belongs to tenant %q, not %q", i, ep.ID, ep.Tenant, tenant)
		case ep.ID == "":
			return memory.Invalidf(op, "member %d: episode id is required", i)
		case seen[ep.ID]:
			return memory.Invalidf(op, "member %d: episode %s is given twice", i, ep.ID)
		case ep.Status == memory.EpisodeSummary:
			return memory.Invalidf(op, "member %d: episode %s is a typical (summary) episode; summarise its source episodes instead", i, ep.ID)
		}
		seen[ep.ID] = true
	}
	return nil
}

// frame is the typical episode without its content: identity, lineage,
// time span and counts.
func (d *digest) frame(tenant string, now time.Time) memory.Episode {
	ids := make([]string, len(d.members))
	events := 0
	for i, ep := range d.members {
		ids[i] = ep.ID
		events += ep.EventCount
	}
	slices.Sort(ids)
	return memory.Episode{
		ID:             SummaryID(tenant, ids),
		Tenant:         tenant,
		UserID:         common(d.members, func(ep memory.Episode) string { return ep.UserID }),
		Agent:          common(d.members, func(ep memory.Episode) string { return ep.Agent }),
		TaskType:       d.taskType(),
		Entities:       d.entities(maxSummaryEntities),
		StartedAt:      d.from,
		EndedAt:        d.to,
		EventCount:     events,
		Status:         memory.EpisodeSummary,
		SourceEpisodes: ids,
		CreatedAt:      now,
	}
}

// taskType is the members' task type: Cluster groups by task type, so
// they normally share one; otherwise the most common, ties by first
// appearance.
func (d *digest) taskType() string {
	count := map[string]int{}
	best := ""
	for _, ep := range d.members {
		count[ep.TaskType]++
		if count[ep.TaskType] > count[best] {
			best = ep.TaskType
		}
	}
	return best
}

func (d *digest) offlineEpisode(tenant string, now time.Time) memory.Episode {
	ep := d.frame(tenant, now)
	ep.Task = runes.ClipWords(d.task(), maxTaskRunes)
	ep.Steps = d.commonSteps()
	ep.Failures = d.commonFailures()
	ep.Outcome = d.outcome()
	ep.Feedback = d.feedback(nil)
	ep.Extractor = OfflineModel
	return ep
}

// count renders "k/n".
func (d *digest) count(k int) string { return fmt.Sprintf("(%d/%d)", k, len(d.members)) }

func (d *digest) commonSteps() []string {
	var out []string
	for _, g := range d.steps {
		if len(g.members) < d.minShared() || len(out) == maxSummarySteps {
			break
		}
		out = append(out, runes.ClipWords(g.words.best(), maxStepRunes-8)+" "+d.count(len(g.members)))
	}
	return out
}

func (d *digest) commonFailures() []memory.Failure {
	var out []memory.Failure
	for _, g := range d.failures {
		if len(g.members) < d.minShared() || len(out) == maxSummaryFailures {
			break
		}
		out = append(out, memory.Failure{
			Attempt: runes.ClipWords(g.attempts.best(), maxFailureRunes-8) + " " + d.count(len(g.members)),
			Cause:   runes.ClipWords(g.causes.best(), maxFailureRunes),
		})
	}
	return out
}

// outcomeLine states the outcome counts and the date range.
func (d *digest) outcomeLine() string {
	type named struct {
		o      memory.Outcome
		en, zh string
	}
	var parts []string
	for _, n := range []named{
		{memory.OutcomeSuccess, "success", "成功"},
		{memory.OutcomePartial, "partial", "部分成功"},
		{memory.OutcomeFailure, "failure", "失败"},
		{memory.OutcomeUnknown, "unknown", "未知"},
	} {
		k := d.outcomes[n.o]
		switch {
		case k == 0:
		case d.zh:
			parts = append(parts, fmt.Sprintf("%s %d 次", n.zh, k))
		default:
			parts = append(parts, fmt.Sprintf("%d %s", k, n.en))
		}
	}
	span := dateRange(d.from, d.to)
	if d.zh {
		return "结果：" + strings.Join(parts, "，") + "；" + span
	}
	return "outcomes: " + strings.Join(parts, ", ") + "; " + span
}

func dateRange(from, to time.Time) string {
	const day = "2006-01-02"
	a, b := from.UTC().Format(day), to.UTC().Format(day)
	if a == b {
		return a
	}
	return a + " → " + b
}

// feedback is the outcome line, then extra lines (a model's notes), then
// the user feedback at least minShared members gave, with counts.
func (d *digest) feedback(extra []string) []string {
	out := []string{d.outcomeLine()}
	for _, e := range extra {
		if e = runes.ClipWords(runes.OneLine(e), maxFeedbackRunes); e != "" && len(out) < maxSummaryFeedback {
			out = append(out, e)
		}
	}
	var w wordings
	var order []string
	for mi, ep := range d.members {
		for _, f := range ep.Feedback {
			n := memory.Normalize(f)
			if n == "" {
				continue
			}
			if _, ok := w.byNorm[n]; !ok {
				order = append(order, n)
			}
			w.add(n, runes.OneLine(f), mi, len(order))
		}
	}
	slices.SortStableFunc(order, func(a, b string) int { return w.byNorm[b].members - w.byNorm[a].members })
	for _, n := range order {
		v := w.byNorm[n]
		if v.members < d.minShared() || len(out) == maxSummaryFeedback {
			break
		}
		out = append(out, runes.ClipWords(v.text, maxFeedbackRunes-8)+" "+d.count(v.members))
	}
	return out
}
