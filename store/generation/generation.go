package generation

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// Vector index generations.
//
// A generation is one vector index built by one embedding model at one
// dimension: its collections (Milvus) or directory (the local index) are
// named after it. The store records which generation recall reads
// (Setting), so every process agrees. When the configured
// embedder differs from that generation's, a process keeps reading the
// recorded generation with the embedder it was built by, and opens the
// configured one as the next generation; the Reindex workflow fills the
// next generation from the store (the system of record), records it, and
// every process switches over at its next poll. Recall never stops.
//
// Every process announces which generation it reads in a setting of its
// own (readerPrefix + its ID), with a beat that moves while it runs. A
// reindex waits until every live process announces the new generation
// (AwaitSwitch), and fails loudly, naming the processes, if some do not in
// time.

// Setting is the setting that names the generation recall reads.
const Setting = "vector.generation"

// PollInterval is how often a process checks the recorded generation.
const PollInterval = 5 * time.Second

const (
	// readerPrefix starts the key of each process's reader record.
	readerPrefix = "vector.reader."
	// readerBeat is how often a process rewrites its reader record when
	// nothing changed; a record whose beat stops moving for two beats is a
	// process that is gone.
	readerBeat = 30 * time.Second
	// readerExpiry is the age past which a reader record is a process gone
	// long ago, whatever the clocks say.
	readerExpiry = 10 * time.Minute
)

// readerRecord is a process's reader record: the generation it reads.
type readerRecord struct {
	Generation string    `json:"generation"`
	Beat       uint64    `json:"beat"`
	Seen       time.Time `json:"seen"`
	Closed     bool      `json:"closed,omitempty"`
	// Error is why the process's last poll of the recorded generation
	// failed, if it did.
	Error string `json:"error,omitempty"`
}

// Generation is a vector index and the embedder that fills it.
type Generation struct {
	Name     string
	Model    string
	Index    memory.VectorIndex
	Embedder memory.Embedder
}

// generationRecord is the stored form of the generation recall reads.
type generationRecord struct {
	Name  string `json:"name"`
	Model string `json:"model"`
	Dim   int    `json:"dim"`
}

var nonName = regexp.MustCompile(`[^a-z0-9]+`)

// Name is the name of the generation an embedding model builds:
// its model string (which includes the dimension, and the tokenizer of an
// index with sparse vectors) folded to letters, digits and '_', so it can
// name a Milvus collection or a directory.
func Name(model string) string {
	return strings.Trim(nonName.ReplaceAllString(strings.ToLower(model), "_"), "_")
}

// Set holds the generation recall reads and, during a reindex,
// the next one. Reads and writes go through the views (Index, Embedder),
// which a switch repoints at once.
type Set struct {
	mu     sync.RWMutex
	active *Generation
	next   *Generation
	// unfilled: the active generation replaced a recorded one that could
	// not serve, and holds nothing yet.
	unfilled bool
	store    memory.EpisodicStore
	log      *slog.Logger

	// process names this process's reader record; the rest is what it
	// last announced, under announcing.
	process    string
	announcing sync.Mutex
	announced  readerRecord
	wrote      time.Time
	pollErr    string
}

// Active returns the generation recall reads.
func (g *Set) Active() *Generation {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.active
}

// Next returns the generation a reindex fills, if one is pending.
func (g *Set) Next() (*Generation, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.next, g.next != nil
}

// Activate records the next generation as the one recall reads, and
// switches this process to it. Other processes follow at their next poll.
func (g *Set) Activate(ctx context.Context, name string) error {
	g.mu.RLock()
	next := g.next
	g.mu.RUnlock()
	if next == nil || next.Name != name {
		if g.Active().Name == name {
			return nil // already active
		}
		return memory.Invalidf("activate generation", "generation %s is not the next generation of this process", name)
	}
	rec, _ := json.Marshal(generationRecord{Name: next.Name, Model: next.Model, Dim: next.Embedder.Dim()})
	if err := g.store.PutSetting(ctx, Setting, string(rec)); err != nil {
		return err
	}
	g.switchTo(name)
	return nil
}

// switchTo makes the next generation active and closes the old one, once
// no call on it is in flight (the views hold the read lock while calling).
func (g *Set) switchTo(name string) {
	g.mu.Lock()
	if g.next == nil || g.next.Name != name {
		g.mu.Unlock()
		return
	}
	old := g.active
	g.active, g.next = g.next, nil
	g.mu.Unlock()
	g.log.Info("vector index generation switched", "from", old.Name, "to", name)
	if err := old.Index.Close(); err != nil {
		g.log.Warn("closing the old vector index generation", "generation", old.Name, "error", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	g.announce(ctx, nil, false)
}

// Watch polls the recorded generation until ctx ends, follows a switch
// another process made, and keeps this process's reader record current.
func (g *Set) Watch(ctx context.Context) {
	t := time.NewTicker(PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		g.Poll(ctx)
	}
}

// Poll follows the recorded generation, if this process has a next one,
// and announces what it reads. A failed poll is logged and announced (a
// reindex waiting for this process says why it has not switched), and
// retried at the next tick.
func (g *Set) Poll(ctx context.Context) {
	var failure error
	if _, pending := g.Next(); pending {
		raw, err := g.store.Setting(ctx, Setting)
		var rec generationRecord
		switch {
		case err != nil:
			failure = fmt.Errorf("read the recorded vector index generation: %w", err)
		case json.Unmarshal([]byte(raw), &rec) != nil:
			failure = fmt.Errorf("the recorded vector index generation %q is not valid JSON", raw)
		case rec.Name != "":
			g.switchTo(rec.Name)
		}
	}
	if ctx.Err() != nil {
		return
	}
	g.announce(ctx, failure, false)
}

// announce writes this process's reader record when what it reads or its
// poll's failure changed, and at least every readerBeat.
func (g *Set) announce(ctx context.Context, failure error, closed bool) {
	g.announcing.Lock()
	defer g.announcing.Unlock()
	msg := ""
	if failure != nil {
		msg = failure.Error()
	}
	if msg != g.pollErr {
		if msg != "" {
			g.log.Warn("vector index generation poll failed; retrying every "+PollInterval.String(), "error", msg)
		} else {
			g.log.Info("vector index generation poll recovered")
		}
		g.pollErr = msg
	}
	rec := readerRecord{Generation: g.Active().Name, Beat: g.announced.Beat + 1, Seen: time.Now().UTC(), Closed: closed, Error: msg}
	if rec.Generation == g.announced.Generation && rec.Error == g.announced.Error && !closed && time.Since(g.wrote) < readerBeat {
		return
	}
	raw, _ := json.Marshal(rec)
	if err := g.store.PutSetting(ctx, readerPrefix+g.process, string(raw)); err != nil {
		g.log.Warn("announcing the vector index generation this process reads failed; retrying", "error", err)
		return
	}
	g.announced, g.wrote = rec, time.Now()
}

// SwitchLagError says which processes had not switched to a generation
// when a reindex stopped waiting for them.
type SwitchLagError struct {
	Generation string
	Waited     time.Duration
	Lagging    map[string]readerRecord // by process
}

func (e *SwitchLagError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "after %s, %d process(es) still read another vector index generation than %s:", e.Waited.Round(time.Second), len(e.Lagging), e.Generation)
	for _, p := range slices.Sorted(maps.Keys(e.Lagging)) {
		r := e.Lagging[p]
		fmt.Fprintf(&b, " %s reads %s", p, r.Generation)
		if r.Error != "" {
			fmt.Fprintf(&b, " (its last poll failed: %s)", r.Error)
		}
		b.WriteString(";")
	}
	b.WriteString(" restart them, or fix what they report, and run the reindex again")
	return b.String()
}

// AwaitSwitch waits until every live process reads generation name, as
// their reader records say, and returns a *SwitchLagError naming those
// that do not after timeout. A process is live while the beat of its
// record moves; one whose beat stands still for two readerBeats, whose
// record is older than readerExpiry, or that closed, is gone and not
// waited for. Only this process's clock measures the waiting.
func (g *Set) AwaitSwitch(ctx context.Context, name string, timeout time.Duration) error {
	start := time.Now()
	type watched struct {
		beat  uint64
		moved time.Time
	}
	beats := map[string]watched{}
	tick := time.NewTicker(PollInterval / 5)
	defer tick.Stop()
	for {
		recs, err := g.store.Settings(ctx, readerPrefix)
		now := time.Now()
		if err == nil {
			lagging := map[string]readerRecord{}
			for key, raw := range recs {
				var r readerRecord
				if json.Unmarshal([]byte(raw), &r) != nil {
					continue
				}
				p := strings.TrimPrefix(key, readerPrefix)
				w, ok := beats[p]
				if !ok || w.beat != r.Beat {
					w = watched{beat: r.Beat, moved: now}
					beats[p] = w
				}
				gone := r.Closed || time.Since(r.Seen) > readerExpiry || now.Sub(w.moved) > 2*readerBeat+PollInterval
				if r.Generation != name && !gone {
					lagging[p] = r
				}
			}
			if len(lagging) == 0 {
				return nil
			}
			if now.Sub(start) >= timeout {
				return &SwitchLagError{Generation: name, Waited: now.Sub(start), Lagging: lagging}
			}
		} else if now.Sub(start) >= timeout {
			return fmt.Errorf("waiting for every process to switch to vector index generation %s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Close closes the open generations.
func (g *Set) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	g.announce(ctx, nil, true) // best effort: a process that cannot is gone after two beats
	cancel()
	g.mu.Lock()
	defer g.mu.Unlock()
	var err error
	if g.next != nil {
		err = g.next.Index.Close()
	}
	if g.active != nil {
		if e := g.active.Index.Close(); err == nil {
			err = e
		}
	}
	return err
}

// embedderView is the embedder of the active generation.
type embedderView struct{ g *Set }

var _ memory.Embedder = embedderView{}

func (v embedderView) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return v.g.Active().Embedder.Embed(ctx, texts)
}

func (v embedderView) Dim() int      { return v.g.Active().Embedder.Dim() }
func (v embedderView) Model() string { return v.g.Active().Embedder.Model() }

// Config is what Open needs.
type Config struct {
	// Store keeps the recorded generation and the reader records.
	Store memory.EpisodicStore
	// Embedder is the configured embedder: its generation is the target.
	Embedder memory.Embedder
	// OpenIndex opens the vector index of generation name at dim.
	OpenIndex func(ctx context.Context, name string, dim int) (memory.VectorIndex, error)
	// EmbedderFor rebuilds the embedder of a recorded generation from its
	// model string.
	EmbedderFor func(model string) (memory.Embedder, error)
	// Tokenizer, when set, names the tokenizer of the index's sparse
	// vectors (bm25.Tokenizer): it is part of the generation's name, so a
	// new tokenizer is a new generation, filled by the Reindex workflow
	// exactly like a new embedder.
	Tokenizer string
	Logger    *slog.Logger
}

// Open opens the generation the store records (with the embedder that
// built it) and, when the configured embedder is another one, the
// configured generation as the next. On a fresh store the configured
// generation is recorded and used. It announces at once what this process
// reads; Watch keeps following.
func Open(ctx context.Context, cfg Config) (*Set, error) {
	store, emb, log := cfg.Store, cfg.Embedder, cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	g := &Set{store: store, log: log, process: processName()}
	target := &Generation{Name: Name(emb.Model()), Model: emb.Model(), Embedder: emb}
	if cfg.Tokenizer != "" {
		target.Name = Name(emb.Model() + " " + cfg.Tokenizer)
	}
	raw, err := store.Setting(ctx, Setting)
	if err != nil {
		return nil, fmt.Errorf("read the vector index generation: %w", err)
	}
	var rec generationRecord
	if raw != "" {
		if err := json.Unmarshal([]byte(raw), &rec); err != nil {
			return nil, fmt.Errorf("the recorded vector index generation %q is not valid: %w", raw, err)
		}
	}
	if rec.Name == "" || rec.Name == target.Name {
		if target.Index, err = cfg.OpenIndex(ctx, target.Name, emb.Dim()); err != nil {
			return nil, err
		}
		g.active = target
		if rec.Name == "" {
			raw, _ := json.Marshal(generationRecord{Name: target.Name, Model: target.Model, Dim: emb.Dim()})
			if err := store.PutSetting(ctx, Setting, string(raw)); err != nil {
				target.Index.Close()
				return nil, err
			}
		}
		return g, nil
	}
	// A recorded generation that cannot serve (its embedder cannot be
	// built here, or its index has an older layout, e.g. without the
	// sparse field) gives way to the configured one at once, which the
	// Reindex workflow fills (Unfilled).
	useTarget := func(why error) (*Set, error) {
		log.Warn("the recorded vector index generation cannot be used; switching to the configured one, which the Reindex workflow fills",
			"recorded", rec.Name, "configured", target.Name, "error", why)
		var err error
		if target.Index, err = cfg.OpenIndex(ctx, target.Name, emb.Dim()); err != nil {
			return nil, err
		}
		raw, _ := json.Marshal(generationRecord{Name: target.Name, Model: target.Model, Dim: emb.Dim()})
		if err := store.PutSetting(ctx, Setting, string(raw)); err != nil {
			target.Index.Close()
			return nil, err
		}
		g.active, g.unfilled = target, true
		return g, nil
	}
	old, err := cfg.EmbedderFor(rec.Model)
	if err != nil {
		return useTarget(err)
	}
	active := &Generation{Name: rec.Name, Model: rec.Model, Embedder: old}
	if active.Index, err = cfg.OpenIndex(ctx, active.Name, old.Dim()); err != nil {
		if memory.IsInvalid(err) {
			return useTarget(err)
		}
		return nil, err
	}
	if target.Index, err = cfg.OpenIndex(ctx, target.Name, emb.Dim()); err != nil {
		active.Index.Close()
		return nil, err
	}
	log.Info("the embedding model or the tokenizer changed: recall reads the recorded generation until the Reindex workflow fills the new one",
		"recorded", active.Name, "next", target.Name)
	g.active, g.next = active, target
	return g, nil
}

// Target implements activities.Generations: the next generation during a
// switch, else the active one.
func (g *Set) Target() (string, memory.VectorIndex, memory.Embedder) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	t := g.active
	if g.next != nil {
		t = g.next
	}
	return t.Name, genIndex{g: g, name: t.Name}, t.Embedder
}

// genIndex is the index of one generation: the named one while it is open
// (active or next), or, with no name, whichever is active at each call, so
// that a switch repoints it at once. Calls hold the read lock, so a switch
// waits for them before it closes the old index.
type genIndex struct {
	g    *Set
	name string
}

var _ memory.HybridSearcher = genIndex{}

func (v genIndex) with(f func(gen *Generation) error) error {
	v.g.mu.RLock()
	defer v.g.mu.RUnlock()
	if v.name == "" {
		return f(v.g.active)
	}
	for _, gen := range []*Generation{v.g.active, v.g.next} {
		if gen != nil && gen.Name == v.name {
			return f(gen)
		}
	}
	return fmt.Errorf("vector index generation %s is closed", v.name)
}

// Upsert writes to the generation. A vector of another dimension was
// embedded just before a switch: that is a transient error (the caller's
// retry embeds again with the new generation's embedder), not invalid
// input.
func (v genIndex) Upsert(ctx context.Context, c memory.Collection, docs []memory.VectorDoc) error {
	return v.with(func(gen *Generation) error {
		for _, d := range docs {
			if len(d.Vector) != gen.Embedder.Dim() {
				return fmt.Errorf("vector index generation %s switched during the write (a vector of dimension %d, the index has %d): retry",
					gen.Name, len(d.Vector), gen.Embedder.Dim())
			}
		}
		return gen.Index.Upsert(ctx, c, docs)
	})
}

func (v genIndex) Search(ctx context.Context, c memory.Collection, vec []float32, f memory.VectorFilter, k int) (hits []memory.VectorHit, err error) {
	err = v.with(func(gen *Generation) error { hits, err = gen.Index.Search(ctx, c, vec, f, k); return err })
	return hits, err
}

// HybridSearch searches the generation when its index is a
// memory.HybridSearcher, and fails with EINVALID otherwise.
func (v genIndex) HybridSearch(ctx context.Context, c memory.Collection, q memory.HybridQuery) (hits []memory.HybridHit, err error) {
	err = v.with(func(gen *Generation) error {
		h, ok := gen.Index.(memory.HybridSearcher)
		if !ok {
			return memory.Invalidf("hybrid search", "vector index generation %s keeps no sparse vectors: use Milvus or the local index", gen.Name)
		}
		hits, err = h.HybridSearch(ctx, c, q)
		return err
	})
	return hits, err
}

func (v genIndex) Get(ctx context.Context, c memory.Collection, tenant string, ids []string) (docs []memory.VectorDoc, err error) {
	err = v.with(func(gen *Generation) error { docs, err = gen.Index.Get(ctx, c, tenant, ids); return err })
	return docs, err
}

func (v genIndex) Delete(ctx context.Context, c memory.Collection, tenant string, ids []string) error {
	return v.with(func(gen *Generation) error { return gen.Index.Delete(ctx, c, tenant, ids) })
}

func (v genIndex) List(ctx context.Context, c memory.Collection, f memory.VectorFilter, after string, limit int) (docs []memory.VectorDoc, err error) {
	err = v.with(func(gen *Generation) error { docs, err = gen.Index.List(ctx, c, f, after, limit); return err })
	return docs, err
}

// Close is a no-op: the runtime closes the generations.
func (v genIndex) Close() error { return nil }

// processName names this process in its reader record: host, PID and a
// random suffix (a PID is reused across restarts and containers).
func processName() string {
	host, _ := os.Hostname()
	host = strings.Trim(nonName.ReplaceAllString(strings.ToLower(host), "-"), "-")
	if len(host) > 40 {
		host = host[:40]
	}
	var b [3]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", cmp.Or(host, "host"), os.Getpid(), hex.EncodeToString(b[:]))
}

// Unfilled reports whether the active generation replaced, at Open, a
// recorded one that could not serve, and so needs the Reindex workflow to
// fill it.
func (g *Set) Unfilled() bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.unfilled
}

// Index is the active generation's index, whichever it is at each call.
func (g *Set) Index() memory.VectorIndex { return genIndex{g: g} }

// Embedder is the active generation's embedder.
func (g *Set) Embedder() memory.Embedder { return embedderView{g} }
