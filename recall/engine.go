package recall

import (
	"container/list"
	"context"
	"sync"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// MaxQueryText bounds the characters of a query's text.
const MaxQueryText = 4000

// Response is the answer to one recall.
type Response struct {
	// Results are the memories found, best first, at most Query.TopK.
	Results []memory.Result `json:"results"`
	// Text is the block to put in a prompt, within Query.MaxTokens; when
	// nothing relevant was found it says so (NothingRelevant).
	Text string `json:"text"`
	// Omitted is how many results the text block left out to fit.
	Omitted int `json:"omitted"`
	// Parsed is what query understanding read from the query text.
	Parsed Parsed `json:"parsed"`
	// Took is the time the recall took, and Stages where it went.
	Took   time.Duration `json:"took_ns"`
	Stages Stages        `json:"-"`
}

// Engine serves recall. It is safe for concurrent use; Close stops its
// background work.
type Engine struct {
	cfg  Config
	deps Deps

	mu      sync.Mutex
	tenants map[string]*list.Element // → *tenantCache
	lru     *list.List

	episodes *episodeCache
	usage    *usageRecorder // nil when usage is not recorded
	stats    *statsCache    // a stateless engine's term statistics

	ctx    context.Context // ends on Close; background catch-ups use it
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New returns an Engine. It validates cfg (defaults filled in) and deps.
func New(cfg Config, deps Deps) (*Engine, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := deps.validate(cfg.Stateless); err != nil {
		return nil, err
	}
	deps = deps.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	e := &Engine{
		cfg: cfg, deps: deps,
		tenants:  map[string]*list.Element{},
		lru:      list.New(),
		episodes: newEpisodeCache(deps.Episodes, cfg.EpisodeCacheSize, cfg.EpisodeCacheTTL),
		ctx:      ctx, cancel: cancel,
	}
	if !cfg.NoUsage {
		e.usage = newUsageRecorder(deps.Memories, cfg.UsageQueue, deps.Logger, deps.Metrics)
	}
	if cfg.Stateless {
		e.stats = newStatsCache(deps.Terms, cfg.StatsTTL)
	}
	return e, nil
}

// Config returns the engine's configuration with defaults filled in.
func (e *Engine) Config() Config { return e.cfg }

// Close stops background catch-ups and writes the queued recall counts.
func (e *Engine) Close() error {
	e.cancel()
	e.wg.Wait()
	if e.usage != nil {
		e.usage.close()
	}
	return nil
}

// Refresh makes the engine see every memory version committed to the
// store for tenant so far: it loads the tenant's cache, or catches it up
// with the change feed. Call it after another process wrote (e.g. after a
// session's distillation, before answering "wait").
func (e *Engine) Refresh(ctx context.Context, tenant string) error {
	if err := memory.ValidateTenant("recall: refresh", tenant); err != nil {
		return err
	}
	if e.cfg.Stateless {
		// Every recall reads the index and the store afresh; only term
		// statistics are reused, for at most StatsTTL.
		e.stats.forget(tenant)
		return nil
	}
	return e.refresh(ctx, e.tenant(tenant))
}

// refresh catches c up with the store, unless the store counts its writes
// (memory.WriteCounter) and none was made since c read it.
func (e *Engine) refresh(ctx context.Context, c *tenantCache) error {
	if wc, ok := e.deps.Memories.(memory.WriteCounter); ok {
		c.mu.RLock()
		current := c.loaded && c.writes == wc.MemoryWrites(c.tenant)
		c.mu.RUnlock()
		if current {
			return nil
		}
	}
	return c.catchUp(ctx, e.deps.Memories, e.cfg.FeedOverlap)
}

// Invalidate drops tenant's cache; the next recall rebuilds it from the
// store. Call it after memories were purged (forget): the change feed
// shows new versions, not deletions.
func (e *Engine) Invalidate(tenant string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if el, ok := e.tenants[tenant]; ok {
		e.lru.Remove(el)
		delete(e.tenants, tenant)
	}
}

// Flush waits until the recall counts of every recall so far are written.
func (e *Engine) Flush(ctx context.Context) error {
	if e.usage == nil {
		return nil
	}
	return e.usage.flush(ctx)
}

// cache returns tenant's loaded cache, loading it on first use.
func (e *Engine) cache(ctx context.Context, tenant string) (*tenantCache, error) {
	c := e.tenant(tenant)
	loaded, err := c.ensureLoaded(ctx, e.deps.Memories)
	if err != nil {
		return nil, err
	}
	if loaded {
		e.prefetchSources(ctx, c)
	}
	return c, nil
}

// prefetchSources reads the provenance of c's source episodes that the
// episode cache lacks or read more than half its TTL ago, so that recalls
// find their results' sources cached instead of reading them one recall
// at a time. Provenance is worth less than an answer: a failure is logged.
func (e *Engine) prefetchSources(ctx context.Context, c *tenantCache) {
	if err := e.episodes.prefetch(ctx, c.tenant, c.sources()); err != nil && ctx.Err() == nil {
		e.deps.Logger.Warn("recall: read source episodes ahead", "tenant", c.tenant, "err", err)
	}
}

// tenant returns tenant's cache, loaded or not, creating it and evicting
// the least recently used tenant beyond MaxTenants.
func (e *Engine) tenant(tenant string) *tenantCache {
	e.mu.Lock()
	defer e.mu.Unlock()
	var c *tenantCache
	if el, ok := e.tenants[tenant]; ok {
		e.lru.MoveToFront(el)
		c = el.Value.(*tenantCache)
	} else {
		c = newTenantCache(tenant, e.deps.Clock, e.deps.Screener)
		e.tenants[tenant] = e.lru.PushFront(c)
		for e.lru.Len() > e.cfg.MaxTenants {
			old := e.lru.Back()
			e.lru.Remove(old)
			delete(e.tenants, old.Value.(*tenantCache).tenant)
		}
	}
	return c
}

// catchUpIfBehind makes sure a recall ranks from a cache close to the
// store, and says whether its results must still be checked against the
// store (verify). A store no other process can write (memory.WriteCounter)
// tells whether anything changed since the cache last read it: if so, the
// cache catches up first, and then holds every change made before this
// recall. Otherwise the cache catches up first when its last catch-up is
// older than Config.MaxStaleness (a replica quiet for an hour answers from
// the store's state, not the hour-old one), and the results are verified.
func (e *Engine) catchUpIfBehind(ctx context.Context, c *tenantCache) (verify bool, err error) {
	if _, ok := e.deps.Memories.(memory.WriteCounter); ok {
		return false, e.refresh(ctx, c)
	}
	c.mu.RLock()
	last := c.lastSync
	c.mu.RUnlock()
	if e.deps.Clock().Sub(last) > e.cfg.MaxStaleness {
		if err := c.catchUp(ctx, e.deps.Memories, e.cfg.FeedOverlap); err != nil {
			return true, err
		}
	}
	return true, nil
}

// maybeSync starts a background catch-up (or rebuild) of c when it is due
// and none is running. Recall never waits for it.
func (e *Engine) maybeSync(c *tenantCache) {
	c.mu.RLock()
	now := e.deps.Clock()
	sinceSync, sinceBuild := now.Sub(c.lastSync), now.Sub(c.lastBuild)
	c.mu.RUnlock()
	if sinceSync < e.cfg.RefreshInterval || !c.syncing.CompareAndSwap(false, true) {
		return
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer c.syncing.Store(false)
		var err error
		if sinceBuild >= e.cfg.RebuildInterval {
			err = c.reload(e.ctx, e.deps.Memories)
		} else {
			err = c.catchUp(e.ctx, e.deps.Memories, e.cfg.FeedOverlap)
		}
		if err == nil {
			e.prefetchSources(e.ctx, c)
		}
		if err != nil && e.ctx.Err() == nil {
			e.deps.Logger.Warn("recall: background refresh", "tenant", c.tenant, "err", err)
		}
	}()
}
