package recall

import (
	"container/list"
	"context"
	"maps"
	"sync"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// episodeCache remembers the provenance of source episodes. Episodes barely
// change once written (consolidation only moves them to cold storage), so a
// bounded LRU with a TTL keeps most recalls free of episode lookups.
type episodeCache struct {
	store memory.EpisodeStore
	size  int
	ttl   time.Duration

	mu    sync.Mutex
	items map[string]*list.Element // tenant\x00id → element holding *cachedEpisode
	lru   *list.List
}

type cachedEpisode struct {
	key     string
	ref     memory.EpisodeRef
	userID  string // whose session it was, for the caller's view of it
	fetched time.Time
}

// sourceRef is a source episode's provenance with the user whose session
// it was, which decides who may see it.
type sourceRef struct {
	ref    memory.EpisodeRef
	userID string
}

// as is the provenance v is shown: another user's session is its ID alone.
func (s sourceRef) as(v memory.Viewer) memory.EpisodeRef {
	if !v.SeesEpisode(memory.Episode{UserID: s.userID}) {
		return memory.EpisodeRef{ID: s.ref.ID, Withheld: true}
	}
	return s.ref
}

func newEpisodeCache(store memory.EpisodeStore, size int, ttl time.Duration) *episodeCache {
	return &episodeCache{store: store, size: size, ttl: ttl, items: map[string]*list.Element{}, lru: list.New()}
}

// refs returns the provenance of ids, with the user of each, looking the
// missing ones up in one batched call. An episode the store does not know
// (forgotten, or no store configured) is returned with its ID only.
func (c *episodeCache) refs(ctx context.Context, tenant string, ids []string) (map[string]sourceRef, error) {
	out := make(map[string]sourceRef, len(ids))
	var missing []string
	now := time.Now()
	c.mu.Lock()
	for _, id := range ids {
		if _, done := out[id]; done {
			continue
		}
		if el, ok := c.items[tenant+"\x00"+id]; ok && now.Sub(el.Value.(*cachedEpisode).fetched) < c.ttl {
			c.lru.MoveToFront(el)
			ce := el.Value.(*cachedEpisode)
			out[id] = sourceRef{ce.ref, ce.userID}
			continue
		}
		out[id] = sourceRef{ref: memory.EpisodeRef{ID: id}}
		missing = append(missing, id)
	}
	c.mu.Unlock()
	if len(missing) == 0 || c.store == nil {
		return out, nil
	}
	found, err := c.read(ctx, tenant, missing, now)
	if err != nil {
		return out, err
	}
	maps.Copy(out, found)
	return out, nil
}

// read reads ids from the store and caches them as read at now; an ID
// the store does not know is cached as expired.
func (c *episodeCache) read(ctx context.Context, tenant string, ids []string, now time.Time) (map[string]sourceRef, error) {
	eps, err := c.store.Episodes(ctx, memory.EpisodeFilter{
		Tenant: tenant, IDs: ids,
		Statuses: []memory.EpisodeStatus{memory.EpisodeLive, memory.EpisodeSummary, memory.EpisodeCold},
	})
	if err != nil {
		return nil, errorf("recall: source episodes", err)
	}
	found := make(map[string]sourceRef, len(ids))
	for _, ep := range eps {
		found[ep.ID] = sourceRef{memory.EpisodeRef{ID: ep.ID, SessionID: ep.SessionID, Task: ep.Task, Outcome: ep.Outcome, EndedAt: ep.EndedAt}, ep.UserID}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		ref, ok := found[id]
		if !ok {
			ref = sourceRef{ref: memory.EpisodeRef{ID: id, Expired: true}}
			found[id] = ref
		}
		c.put(tenant+"\x00"+id, ref, now)
	}
	return found, nil
}

// prefetchBatch is how many episodes prefetch reads in one query.
const prefetchBatch = 1000

// prefetch reads the provenance of those of ids the cache lacks or read
// more than half its TTL ago, at most half the cache's size, so that the
// recalls after find them; see Engine.prefetchSources.
func (c *episodeCache) prefetch(ctx context.Context, tenant string, ids []string) error {
	if c.store == nil {
		return nil
	}
	now := time.Now()
	var due []string
	c.mu.Lock()
	for _, id := range ids {
		if el, ok := c.items[tenant+"\x00"+id]; !ok || now.Sub(el.Value.(*cachedEpisode).fetched) > c.ttl/2 {
			due = append(due, id)
		}
	}
	c.mu.Unlock()
	due = due[:min(len(due), c.size/2)]
	for start := 0; start < len(due); start += prefetchBatch {
		if _, err := c.read(ctx, tenant, due[start:min(len(due), start+prefetchBatch)], now); err != nil {
			return err
		}
	}
	return nil
}

func (c *episodeCache) put(key string, ref sourceRef, at time.Time) {
	if el, ok := c.items[key]; ok {
		el.Value = &cachedEpisode{key, ref.ref, ref.userID, at}
		c.lru.MoveToFront(el)
		return
	}
	c.items[key] = c.lru.PushFront(&cachedEpisode{key, ref.ref, ref.userID, at})
	for c.lru.Len() > c.size {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.items, old.Value.(*cachedEpisode).key)
	}
}
