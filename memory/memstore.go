package memory

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// MemStore is the in-memory reference EpisodicStore. It is what the store
// acceptance suite is checked against first, and what unit tests use. It is
// safe for concurrent use and keeps nothing across restarts.
type MemStore struct {
	mu        sync.RWMutex
	events    map[string]map[string]Event    // tenant → event ID → event
	episodes  map[string]map[string]Episode  // tenant → episode ID → episode
	versions  map[string]map[string][]Memory // tenant → memory ID → versions by Version
	usage     map[string]map[string][]Usage  // tenant → memory ID → distinct uses
	decisions map[string]map[string]Decision // tenant → decision ID → decision
	order     map[string][]string            // tenant → decision IDs in log order
	settings  map[string]string
	terms     map[termKey]TermRow // term statistics rows
	writes    WriteCounts         // memory writes and purges
}

var (
	_ EpisodicStore = (*MemStore)(nil)
	_ WriteCounter  = (*MemStore)(nil)
)

// MemoryWrites implements WriteCounter.
func (s *MemStore) MemoryWrites(tenant string) uint64 { return s.writes.Count(tenant) }

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{
		events:    map[string]map[string]Event{},
		episodes:  map[string]map[string]Episode{},
		versions:  map[string]map[string][]Memory{},
		usage:     map[string]map[string][]Usage{},
		decisions: map[string]map[string]Decision{},
		order:     map[string][]string{},
		settings:  map[string]string{},
	}
}

func inner[V any](m map[string]map[string]V, tenant string) map[string]V {
	t, ok := m[tenant]
	if !ok {
		t = map[string]V{}
		m[tenant] = t
	}
	return t
}

// AppendEvents implements EventLog.
func (s *MemStore) AppendEvents(ctx context.Context, events []Event) error {
	if err := ValidateEvents("memstore: append events", events); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range events {
		t := inner(s.events, e.Tenant)
		if _, ok := t[e.ID]; !ok {
			e.TS = e.TS.UTC()
			t[e.ID] = e
		}
	}
	return nil
}

// SessionEvents implements EventLog.
func (s *MemStore) SessionEvents(ctx context.Context, tenant, sessionID string) ([]Event, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []Event{}
	for _, e := range s.events[tenant] {
		if e.SessionID == sessionID {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, CompareEvents)
	return out, nil
}

// SessionEventCount implements EventLog.
func (s *MemStore) SessionEventCount(ctx context.Context, tenant, sessionID string) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, e := range s.events[tenant] {
		if e.SessionID == sessionID {
			n++
		}
	}
	return n, nil
}

// SessionUsers implements EventLog.
func (s *MemStore) SessionUsers(ctx context.Context, tenant, sessionID string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []string{}
	for _, e := range s.events[tenant] {
		if e.SessionID == sessionID && !slices.Contains(out, e.UserID) {
			out = append(out, e.UserID)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Sessions implements EventLog.
func (s *MemStore) Sessions(ctx context.Context, tenant, userID string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []string{}
	for _, e := range s.events[tenant] {
		if (userID == "" || e.UserID == userID) && !slices.Contains(out, e.SessionID) {
			out = append(out, e.SessionID)
		}
	}
	slices.Sort(out)
	return out, nil
}

// PutEpisode implements EpisodeStore.
func (s *MemStore) PutEpisode(ctx context.Context, ep Episode) error {
	if err := ValidateEpisode("memstore: put episode", ep); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	inner(s.episodes, ep.Tenant)[ep.ID] = cloneEpisode(ep)
	return nil
}

// Episode implements EpisodeStore.
func (s *MemStore) Episode(ctx context.Context, tenant, id string) (Episode, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ep, ok := s.episodes[tenant][id]
	if !ok {
		return Episode{}, NotFoundf("memstore: episode", "episode %s not found", id)
	}
	return cloneEpisode(ep), nil
}

// Episodes implements EpisodeStore.
func (s *MemStore) Episodes(ctx context.Context, f EpisodeFilter) ([]Episode, error) {
	if err := ValidateTenant("memstore: episodes", f.Tenant); err != nil {
		return nil, err
	}
	statuses := f.Statuses
	if len(statuses) == 0 {
		statuses = []EpisodeStatus{EpisodeLive, EpisodeSummary}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []Episode{}
	for _, ep := range s.episodes[f.Tenant] {
		if len(f.IDs) > 0 && !slices.Contains(f.IDs, ep.ID) ||
			f.SessionID != "" && ep.SessionID != f.SessionID ||
			f.UserID != "" && ep.UserID != f.UserID ||
			f.TaskType != "" && ep.TaskType != f.TaskType ||
			f.Entity != "" && !slices.Contains(ep.Entities, f.Entity) ||
			f.Project != "" && ep.Project != f.Project ||
			!f.Since.IsZero() && ep.EndedAt.Before(f.Since) ||
			!f.Until.IsZero() && !ep.EndedAt.Before(f.Until) ||
			!slices.Contains(statuses, ep.Status) {
			continue
		}
		out = append(out, cloneEpisode(ep))
	}
	slices.SortFunc(out, func(a, b Episode) int {
		if c := b.EndedAt.Compare(a.EndedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// ArchiveEpisodes implements EpisodeStore.
func (s *MemStore) ArchiveEpisodes(ctx context.Context, tenant string, ids []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if ep, ok := s.episodes[tenant][id]; ok {
			ep.Status = EpisodeCold
			s.episodes[tenant][id] = ep
		}
	}
	return nil
}

// PutMemories implements MemoryStore.
func (s *MemStore) PutMemories(ctx context.Context, ms []Memory) error {
	if err := ValidateMemories("memstore: put memories", ms); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.writes.Add(TenantsOf(ms)...)
	for _, m := range ms {
		m = m.Clone()
		m.Scope = m.Scope.Norm()
		m.RecallCount, m.LastRecalledAt = 0, time.Time{} // usage lives apart
		t := inner(s.versions, m.Tenant)
		vs := t[m.ID]
		i, found := slices.BinarySearchFunc(vs, m.Version, func(x Memory, v int) int { return cmp.Compare(x.Version, v) })
		if found {
			vs[i] = m
		} else {
			vs = slices.Insert(vs, i, m)
		}
		t[m.ID] = vs
	}
	return nil
}

func (s *MemStore) withUsage(m Memory) Memory {
	m = m.Clone()
	for _, u := range s.usage[m.Tenant][m.ID] {
		if u.Kind != UsageRecalled {
			continue
		}
		m.RecallCount++
		if u.At.After(m.LastRecalledAt) {
			m.LastRecalledAt = u.At
		}
	}
	return m
}

// Memory implements MemoryStore.
func (s *MemStore) Memory(ctx context.Context, tenant, id string) (Memory, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	vs := s.versions[tenant][id]
	if len(vs) == 0 {
		return Memory{}, NotFoundf("memstore: memory", "memory %s not found", id)
	}
	return s.withUsage(vs[len(vs)-1]), nil
}

// Memories implements MemoryStore.
func (s *MemStore) Memories(ctx context.Context, f MemoryFilter) ([]Memory, error) {
	if err := ValidateTenant("memstore: memories", f.Tenant); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []Memory{}
	versions := s.versions[f.Tenant]
	if len(f.IDs) > 0 && len(f.IDs) < len(versions) { // look the few up
		named := make(map[string][]Memory, len(f.IDs))
		for _, id := range f.IDs {
			if vs, ok := versions[id]; ok {
				named[id] = vs
			}
		}
		versions = named
	}
	for id, vs := range versions {
		m := vs[len(vs)-1]
		if len(f.IDs) > 0 && !slices.Contains(f.IDs, id) ||
			!InScopes(m.Scope, f.Scopes) ||
			len(f.Kinds) > 0 && !slices.Contains(f.Kinds, m.Kind) ||
			len(f.Statuses) > 0 && !slices.Contains(f.Statuses, m.Status) ||
			f.ContentHash != "" && m.ContentHash != f.ContentHash ||
			len(f.ContentHashes) > 0 && !slices.Contains(f.ContentHashes, m.ContentHash) ||
			f.Source != "" && !slices.Contains(m.Sources, f.Source) ||
			len(f.Sources) > 0 && !slices.ContainsFunc(m.Sources, func(s string) bool { return slices.Contains(f.Sources, s) }) ||
			!f.UpdatedAfter.IsZero() && !m.UpdatedAt.After(f.UpdatedAfter) ||
			f.ByID && id <= f.IDAfter ||
			f.Newest && !f.Before.IsZero() && cmp.Or(m.UpdatedAt.Truncate(time.Millisecond).Compare(f.Before.Truncate(time.Millisecond)), cmp.Compare(m.ID, f.BeforeID)) >= 0 {
			continue
		}
		out = append(out, s.withUsage(m))
	}
	slices.SortFunc(out, func(a, b Memory) int {
		if f.ByID {
			return cmp.Compare(a.ID, b.ID)
		}
		if f.Newest {
			return CompareUpdated(b, a)
		}
		return CompareUpdated(a, b)
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// CurrentVersions implements MemoryStore.
func (s *MemStore) CurrentVersions(ctx context.Context, tenant string, ids []string) (map[string]int, error) {
	if err := ValidateTenant("memstore: current versions", tenant); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]int, len(ids))
	for _, id := range ids {
		if vs := s.versions[tenant][id]; len(vs) > 0 {
			out[id] = vs[len(vs)-1].Version
		}
	}
	return out, nil
}

// History implements MemoryStore.
func (s *MemStore) History(ctx context.Context, tenant, id string) ([]Memory, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	vs := s.versions[tenant][id]
	if len(vs) == 0 {
		return nil, NotFoundf("memstore: history", "memory %s not found", id)
	}
	out := make([]Memory, len(vs))
	for i, m := range vs {
		out[i] = m.Clone()
	}
	return out, nil
}

// RecordUsage implements MemoryStore.
func (s *MemStore) RecordUsage(ctx context.Context, us []Usage) error {
	for _, u := range us {
		if err := ValidateTenant("memstore: record usage", u.Tenant); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range us {
		u.At = u.At.UTC()
		t := inner(s.usage, u.Tenant)
		if !slices.ContainsFunc(t[u.MemoryID], func(x Usage) bool { return x.Kind == u.Kind && x.At.Equal(u.At) }) {
			t[u.MemoryID] = append(t[u.MemoryID], u)
		}
	}
	return nil
}

// LogDecision implements DecisionLog.
func (s *MemStore) LogDecision(ctx context.Context, d Decision) error {
	if err := ValidateDecision("memstore: log decision", d); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := inner(s.decisions, d.Tenant)
	if _, ok := t[d.ID]; ok {
		return nil
	}
	t[d.ID] = d
	s.order[d.Tenant] = append(s.order[d.Tenant], d.ID)
	return nil
}

// AppendDecisions logs decisions in one write (the ledger's batches): all
// of them, or none if one is invalid. One logged already is left as it is.
func (s *MemStore) AppendDecisions(ctx context.Context, ds []Decision) error {
	for _, d := range ds {
		if err := ValidateDecision("memstore: append decisions", d); err != nil {
			return err
		}
	}
	for _, d := range ds {
		if err := s.LogDecision(ctx, d); err != nil {
			return err
		}
	}
	return nil
}

// LoggedDecisionIDs returns which of ids are logged.
func (s *MemStore) LoggedDecisionIDs(ctx context.Context, tenant string, ids []string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for _, id := range ids {
		if _, ok := s.decisions[tenant][id]; ok {
			out = append(out, id)
		}
	}
	return out, nil
}

// Decision implements DecisionLog.
func (s *MemStore) Decision(ctx context.Context, tenant, id string) (Decision, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, ok := s.decisions[tenant][id]
	if !ok {
		return Decision{}, NotFoundf("memstore: decision", "decision %s not found", id)
	}
	return d, nil
}

// Decisions implements DecisionLog.
func (s *MemStore) Decisions(ctx context.Context, f DecisionFilter) ([]Decision, error) {
	if err := ValidateTenant("memstore: decisions", f.Tenant); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []Decision{}
	for _, id := range s.order[f.Tenant] {
		d := s.decisions[f.Tenant][id]
		if len(f.IDs) > 0 && !slices.Contains(f.IDs, d.ID) ||
			f.WorkflowID != "" && d.WorkflowID != f.WorkflowID ||
			f.MemoryID != "" && !d.Mentions(f.MemoryID) ||
			!f.Before.IsZero() && !d.CreatedAt.Before(f.Before) {
			continue
		}
		out = append(out, d)
	}
	slices.SortStableFunc(out, func(a, b Decision) int { return a.CreatedAt.Compare(b.CreatedAt) })
	if f.Newest {
		slices.Reverse(out)
	}
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// Purge implements EpisodicStore.
func (s *MemStore) Purge(ctx context.Context, r PurgeRequest) (PurgeCounts, error) {
	var n PurgeCounts
	if err := ValidateTenant("memstore: purge", r.Tenant); err != nil {
		return n, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.writes.Add(r.Tenant)
	t := r.Tenant
	for id, e := range s.events[t] {
		if r.All || slices.Contains(r.SessionIDs, e.SessionID) {
			delete(s.events[t], id)
			n.Events++
		}
	}
	for id := range s.episodes[t] {
		if r.All || slices.Contains(r.EpisodeIDs, id) {
			delete(s.episodes[t], id)
			n.Episodes++
		}
	}
	for id, vs := range s.versions[t] {
		if r.All || slices.Contains(r.MemoryIDs, id) {
			delete(s.versions[t], id)
			delete(s.usage[t], id)
			n.Memories++
			n.Versions += len(vs)
		}
	}
	kept := s.order[t][:0]
	for _, id := range s.order[t] {
		d := s.decisions[t][id]
		if r.All || slices.ContainsFunc(r.MemoryIDs, d.Mentions) {
			delete(s.decisions[t], id)
			n.Decisions++
			continue
		}
		kept = append(kept, id)
	}
	s.order[t] = kept
	s.purgeTerms(t, r.MemoryIDs, r.All)
	return n, nil
}

// Tenants implements EpisodicStore.
func (s *MemStore) Tenants(ctx context.Context) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for t, eps := range s.episodes {
		if len(eps) > 0 || len(s.versions[t]) > 0 {
			out = append(out, t)
		}
	}
	for t, vs := range s.versions {
		if len(vs) > 0 && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Setting implements EpisodicStore.
func (s *MemStore) Setting(ctx context.Context, key string) (string, error) {
	if err := ValidateSettingKey("memstore: setting", key); err != nil {
		return "", err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.settings[key], nil
}

// PutSetting implements EpisodicStore.
func (s *MemStore) PutSetting(ctx context.Context, key, value string) error {
	if err := ValidateSettingKey("memstore: put setting", key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settings[key] = value
	return nil
}

// DeleteSetting implements EpisodicStore.
func (s *MemStore) DeleteSetting(ctx context.Context, key string) error {
	if err := ValidateSettingKey("memstore: delete setting", key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.settings, key)
	return nil
}

// Settings implements EpisodicStore.
func (s *MemStore) Settings(ctx context.Context, prefix string) (map[string]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string]string{}
	for k, v := range s.settings {
		if strings.HasPrefix(k, prefix) {
			out[k] = v
		}
	}
	return out, nil
}

// Close implements EpisodicStore.
func (s *MemStore) Close() error { return nil }

// Mentions reports whether the decision changed or created memory id.
func (d Decision) Mentions(id string) bool {
	has := func(m Memory) bool { return m.ID == id }
	return d.TargetID == id || slices.ContainsFunc(d.Before, has) || slices.ContainsFunc(d.After, has)
}

func cloneEpisode(ep Episode) Episode {
	ep.Entities = slices.Clone(ep.Entities)
	ep.Steps = slices.Clone(ep.Steps)
	ep.Failures = slices.Clone(ep.Failures)
	ep.Feedback = slices.Clone(ep.Feedback)
	ep.SourceEpisodes = slices.Clone(ep.SourceEpisodes)
	return ep
}

// Clone returns a copy of m that shares no slice with it.
func (m Memory) Clone() Memory {
	m.Entities = slices.Clone(m.Entities)
	m.Sources = slices.Clone(m.Sources)
	m.Evidence = slices.Clone(m.Evidence)
	m.Supersedes = slices.Clone(m.Supersedes)
	m.Flags = slices.Clone(m.Flags)
	return m
}
