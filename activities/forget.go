package activities

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/hindsight-memory/hindsight/consolidate"
	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/plan"
)

// allEpisodes are the statuses an episode can have: forgetting reads them all.
var allEpisodes = []memory.EpisodeStatus{memory.EpisodeLive, memory.EpisodeCold, memory.EpisodeSummary}

// ResolveForget follows lineage from what to forget to everything derived
// from it: a user's sessions (from their events and episodes), the
// sessions' episodes, the memories those episodes are sources of (deleted
// when every source is forgotten, rebuilt otherwise) and the typical
// episodes that summarise them. It reads only, so it can simply rerun.
func (a *Activities) ResolveForget(ctx context.Context, in ledger.ForgetInput) (ForgetPlan, error) {
	if err := in.Validate(); err != nil {
		return ForgetPlan{}, temporalError(err)
	}
	p := ForgetPlan{Tenant: in.Tenant, All: in.All, Memories: slices.Clone(in.MemoryIDs)}
	if in.All {
		return p, nil
	}
	sessions := slices.Clone(in.SessionIDs)
	if in.UserID != "" {
		byEvents, err := a.Store.Sessions(ctx, in.Tenant, in.UserID)
		if err != nil {
			return p, temporalError(err)
		}
		byEpisodes, err := a.Store.Episodes(ctx, memory.EpisodeFilter{Tenant: in.Tenant, UserID: in.UserID, Statuses: allEpisodes})
		if err != nil {
			return p, temporalError(err)
		}
		sessions = append(sessions, byEvents...)
		for _, ep := range byEpisodes {
			sessions = append(sessions, ep.SessionID)
		}
	}
	slices.Sort(sessions)
	p.Sessions = slices.Compact(sessions)
	forgotten := map[string]bool{}
	for _, s := range p.Sessions {
		id := memory.EpisodeID(in.Tenant, s)
		forgotten[id] = true
		p.Episodes = append(p.Episodes, id)
	}

	// Memories learned from the forgotten episodes.
	purge := map[string]bool{}
	for _, id := range p.Memories {
		purge[id] = true
	}
	rebuild := map[string]bool{}
	for i, ep := range p.Episodes {
		if i%100 == 0 {
			activity.RecordHeartbeat(ctx, i)
		}
		ms, err := a.Store.Memories(ctx, memory.MemoryFilter{Tenant: in.Tenant, Source: ep})
		if err != nil {
			return p, temporalError(err)
		}
		for _, m := range ms {
			if m.Status == memory.StatusForgotten || purge[m.ID] {
				continue
			}
			if slices.ContainsFunc(m.Sources, func(s string) bool { return !forgotten[s] }) {
				rebuild[m.ID] = true
			} else {
				purge[m.ID] = true
				delete(rebuild, m.ID)
			}
		}
	}
	// Everything in the user's own scope goes, whatever its sources: a
	// memory says whose it is even after its sessions' events expired.
	if in.UserID != "" {
		own, err := a.Store.Memories(ctx, memory.MemoryFilter{Tenant: in.Tenant, Scopes: []memory.Scope{memory.UserScope(in.UserID)}})
		if err != nil {
			return p, temporalError(err)
		}
		for _, m := range own {
			if m.Status != memory.StatusForgotten {
				purge[m.ID] = true
				delete(rebuild, m.ID)
				p.Private = append(p.Private, m.ID)
			}
		}
		slices.Sort(p.Private)
	}
	p.Memories, p.Rebuild = sortedKeys(purge), sortedKeys(rebuild)

	// Typical episodes that stand for a forgotten episode.
	if len(forgotten) > 0 {
		sums, err := a.Store.Episodes(ctx, memory.EpisodeFilter{Tenant: in.Tenant, Statuses: []memory.EpisodeStatus{memory.EpisodeSummary}})
		if err != nil {
			return p, temporalError(err)
		}
		for _, s := range sums {
			if slices.ContainsFunc(s.SourceEpisodes, func(id string) bool { return forgotten[id] }) {
				p.Summaries = append(p.Summaries, s.ID)
			}
		}
	}
	return p, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// PurgeEpisodic deletes a forget plan's raw events and episodes (hot and
// archived) and the episodes' vectors; with All, every episodic row and
// episode vector of the tenant. Memories are the ledger's business.
// Purging twice is a no-op.
func (a *Activities) PurgeEpisodic(ctx context.Context, p ForgetPlan) (ledger.ForgetReceipt, error) {
	r := ledger.ForgetReceipt{Memories: []string{}, Sessions: p.Sessions, Episodes: p.Episodes}
	if p.All {
		n, err := a.Store.Purge(ctx, memory.PurgeRequest{Tenant: p.Tenant, All: true})
		if err != nil {
			return r, temporalError(err)
		}
		r.Store = memory.PurgeCounts{Events: n.Events, Episodes: n.Episodes}
		r.EpisodeVectors, err = a.deleteAllVectors(ctx, memory.CollectionEpisodes, p.Tenant)
		return r, temporalError(err)
	}
	if len(p.Sessions) == 0 && len(p.Episodes) == 0 {
		return r, nil
	}
	n, err := a.Store.Purge(ctx, memory.PurgeRequest{Tenant: p.Tenant, SessionIDs: p.Sessions, EpisodeIDs: p.Episodes})
	if err != nil {
		return r, temporalError(err)
	}
	r.Store = n
	have, err := a.Index.Get(ctx, memory.CollectionEpisodes, p.Tenant, p.Episodes)
	if err != nil {
		return r, temporalError(err)
	}
	if err := a.Index.Delete(ctx, memory.CollectionEpisodes, p.Tenant, p.Episodes); err != nil {
		return r, temporalError(err)
	}
	r.EpisodeVectors = len(have)
	return r, nil
}

// deleteAllVectors removes every document of a tenant from a collection,
// page by page, and counts them.
func (a *Activities) deleteAllVectors(ctx context.Context, c memory.Collection, tenant string) (int, error) {
	n := 0
	for {
		page, err := a.Index.List(ctx, c, memory.VectorFilter{Tenant: tenant}, "", 1000)
		if err != nil || len(page) == 0 {
			return n, err
		}
		ids := make([]string, len(page))
		for i, d := range page {
			ids[i] = d.ID
		}
		if err := a.Index.Delete(ctx, c, tenant, ids); err != nil {
			return n, err
		}
		n += len(ids)
		activity.RecordHeartbeat(ctx, n)
	}
}

// planDropSources plans a new version of m without the forgotten source
// episodes (plan.DropSources), reading the events of the sources that
// remain, whose evidence survives.
func (a *Activities) planDropSources(ctx context.Context, id string, m memory.Memory, drop []string, now time.Time) (memory.Decision, error) {
	op := plan.Op{DecisionID: id, Now: now, Lifecycle: a.lifecycle()}
	keep := plan.RemainingSources(m, drop)
	var events []string
	if m.DecisionID != id && len(keep) < len(m.Sources) && len(m.Evidence) > 0 && len(keep) > 0 {
		eps, err := a.Store.Episodes(ctx, memory.EpisodeFilter{Tenant: m.Tenant, IDs: keep, Statuses: allEpisodes})
		if err != nil {
			return memory.Decision{}, err
		}
		for _, ep := range eps {
			evs, err := a.Store.SessionEvents(ctx, m.Tenant, ep.SessionID)
			if err != nil {
				return memory.Decision{}, err
			}
			for _, e := range evs {
				events = append(events, e.ID)
			}
		}
	}
	return plan.DropSources(op, m, drop, events)
}

func (a *Activities) lifecycle() memory.Lifecycle {
	if a.Merge.Lifecycle == (memory.Lifecycle{}) {
		return memory.DefaultLifecycle
	}
	return a.Merge.Lifecycle
}

// minSummaryMembers is the fewest episodes a typical episode stands for.
const minSummaryMembers = 2

// RebuildSummaries rebuilds the typical episodes of a forget plan from
// their members that remain, or removes them when fewer than two remain,
// so that no summary keeps a trace of a forgotten episode. Rebuilding is
// deterministic in the remaining members, so a retry rebuilds the same.
func (a *Activities) RebuildSummaries(ctx context.Context, p ForgetPlan) (ledger.ForgetReceipt, error) {
	r := ledger.ForgetReceipt{Memories: []string{}}
	now := a.now()
	for _, id := range p.Summaries {
		sum, err := a.Store.Episode(ctx, p.Tenant, id)
		if memory.IsNotFound(err) {
			continue // rebuilt or removed by an earlier attempt
		}
		if err != nil {
			return r, temporalError(err)
		}
		keep := slices.DeleteFunc(slices.Clone(sum.SourceEpisodes), func(e string) bool { return slices.Contains(p.Episodes, e) })
		members, err := a.Store.Episodes(ctx, memory.EpisodeFilter{Tenant: p.Tenant, IDs: keep, Statuses: allEpisodes})
		if err != nil {
			return r, temporalError(err)
		}
		if len(members) >= minSummaryMembers {
			var sum consolidate.Summary
			if a.Summarizer != nil {
				sum, err = a.Summarizer.Summarize(ctx, p.Tenant, members, now)
			} else {
				sum, err = consolidate.Offline{}.Summarize(ctx, p.Tenant, members, now)
			}
			if err != nil {
				return r, temporalError(fmt.Errorf("rebuild summary %s: %w", id, err))
			}
			rebuilt := sum.Episode
			if err := a.Store.PutEpisode(ctx, rebuilt); err != nil {
				return r, temporalError(err)
			}
			if err := a.IndexEpisode(ctx, rebuilt); err != nil {
				return r, err
			}
		}
		n, err := a.Store.Purge(ctx, memory.PurgeRequest{Tenant: p.Tenant, EpisodeIDs: []string{id}})
		if err != nil {
			return r, temporalError(err)
		}
		if err := a.Index.Delete(ctx, memory.CollectionEpisodes, p.Tenant, []string{id}); err != nil {
			return r, temporalError(err)
		}
		r.Store.Episodes += n.Episodes
		r.EpisodeVectors++
		r.Summaries = append(r.Summaries, id)
		activity.RecordHeartbeat(ctx, id)
	}
	return r, nil
}
