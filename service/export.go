package service

import (
	"context"
	"slices"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// UserExport is everything Hindsight holds about one user of a tenant: a
// data-access request's answer.
type UserExport struct {
	Tenant     string    `json:"tenant"`
	UserID     string    `json:"user_id"`
	ExportedAt time.Time `json:"exported_at"`
	// Memories are the user's own (their scope) and the shared memories
	// learned from their sessions, each with every version, oldest first.
	Memories []ExportedMemory `json:"memories"`
	// Episodes are the distilled episodes of the user's sessions, hot and
	// archived; Events their raw events, by session.
	Episodes []memory.Episode          `json:"episodes"`
	Events   map[string][]memory.Event `json:"events"`
}

// ExportedMemory is one memory and why it is in the export.
type ExportedMemory struct {
	// Why is "own" (in the user's scope) or "learned from the user's
	// sessions" (shared, with at least one of them as a source).
	Why      string          `json:"why"`
	Versions []memory.Memory `json:"versions"`
}

// Export reads everything store holds about userID in tenant. It only
// reads.
func Export(ctx context.Context, store memory.EpisodicStore, tenant, userID string, now time.Time) (UserExport, error) {
	const op = "export"
	if err := memory.ValidateTenant(op, tenant); err != nil {
		return UserExport{}, err
	}
	if !memory.UserScope(userID).Valid() {
		return UserExport{}, memory.Invalidf(op, "user %q is not a valid user ID: give the user_id their sessions carry", userID)
	}
	x := UserExport{Tenant: tenant, UserID: userID, ExportedAt: now.UTC(), Memories: []ExportedMemory{}, Episodes: []memory.Episode{}, Events: map[string][]memory.Event{}}

	sessions, err := store.Sessions(ctx, tenant, userID)
	if err != nil {
		return x, err
	}
	eps, err := store.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, UserID: userID,
		Statuses: []memory.EpisodeStatus{memory.EpisodeLive, memory.EpisodeCold, memory.EpisodeSummary}})
	if err != nil {
		return x, err
	}
	x.Episodes = append(x.Episodes, eps...)
	for _, ep := range eps {
		sessions = append(sessions, ep.SessionID)
	}
	slices.Sort(sessions)
	sessions = slices.Compact(sessions)
	episodeIDs := map[string]bool{}
	for _, s := range sessions {
		evs, err := store.SessionEvents(ctx, tenant, s)
		if err != nil {
			return x, err
		}
		if len(evs) > 0 {
			x.Events[s] = evs
		}
		episodeIDs[memory.EpisodeID(tenant, s)] = true
	}

	why := map[string]string{}
	own, err := store.Memories(ctx, memory.MemoryFilter{Tenant: tenant, Scopes: []memory.Scope{memory.UserScope(userID)}})
	if err != nil {
		return x, err
	}
	for _, m := range own {
		why[m.ID] = "own"
	}
	for ep := range episodeIDs {
		learned, err := store.Memories(ctx, memory.MemoryFilter{Tenant: tenant, Source: ep})
		if err != nil {
			return x, err
		}
		for _, m := range learned {
			if why[m.ID] == "" {
				why[m.ID] = "learned from the user's sessions"
			}
		}
	}
	ids := make([]string, 0, len(why))
	for id := range why {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		vs, err := store.History(ctx, tenant, id)
		if err != nil {
			return x, err
		}
		if vs[len(vs)-1].Status == memory.StatusForgotten {
			continue
		}
		x.Memories = append(x.Memories, ExportedMemory{Why: why[id], Versions: vs})
	}
	return x, nil
}
