package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hindsight-memory/hindsight/memory"
)

// Index is the local, persisted memory.VectorIndex. It is safe for
// concurrent use.
type Index struct {
	cfg  Config
	lock *os.File
	wal  *wal

	mu     sync.RWMutex
	parts  map[partitionKey]*partition
	closed bool

	ckMu      sync.Mutex // one checkpoint at a time
	ckWanted  chan struct{}
	done      chan struct{}
	wg        sync.WaitGroup
	snapBytes atomic.Int64 // size of the latest snapshots, which scales the checkpoint trigger
	stats     searchStats
}

var _ memory.VectorIndex = (*Index)(nil)

// meta is dir/meta.json: what the directory holds.
type meta struct {
	Format int `json:"format"`
	Dim    int `json:"dim"`
}

// Open opens the index in cfg.Dir, creating it if needed, and recovers
// every acknowledged write: it loads the partition snapshots, then replays
// the log after them. It fails with EINVALID when the directory holds
// vectors of another dimension.
func Open(cfg Config) (*Index, error) {
	const op = "local: open"
	if err := cfg.Validate(); err != nil {
		return nil, &memory.Error{Code: memory.EINVALID, Op: op, Err: err}
	}
	cfg = cfg.withDefaults()
	for _, sub := range []string{"wal", filepath.Join("snap", string(memory.CollectionMemories)), filepath.Join("snap", string(memory.CollectionEpisodes))} {
		if err := os.MkdirAll(filepath.Join(cfg.Dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
	}
	lock, err := lockDir(filepath.Join(cfg.Dir, "LOCK"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	x := &Index{cfg: cfg, lock: lock, parts: map[partitionKey]*partition{}, ckWanted: make(chan struct{}, 1), done: make(chan struct{})}
	if err := x.recover(); err != nil {
		lock.Close()
		var me *memory.Error
		if errors.As(err, &me) {
			return nil, err
		}
		return nil, fmt.Errorf("%s %s: %w", op, cfg.Dir, err)
	}
	x.wg.Go(x.checkpointLoop)
	return x, nil
}

// recover checks the directory's dimension, loads snapshots and replays
// the log.
func (x *Index) recover() error {
	path := filepath.Join(x.cfg.Dir, "meta.json")
	switch b, err := os.ReadFile(path); {
	case errors.Is(err, os.ErrNotExist):
		b, _ := json.Marshal(meta{Format: 1, Dim: x.cfg.Dim})
		if err := writeFileSync(path, b); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		var m meta
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if m.Dim != x.cfg.Dim {
			return memory.Invalidf("local: open", "the index in %s holds vectors of dimension %d but the embedder produces dimension %d: reindex into a new directory, or configure the embedder it was built with", x.cfg.Dir, m.Dim, x.cfg.Dim)
		}
	}

	var maxLSN uint64
	for _, coll := range []memory.Collection{memory.CollectionMemories, memory.CollectionEpisodes} {
		dir := filepath.Join(x.cfg.Dir, "snap", string(coll))
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		var total int64
		for _, e := range entries {
			name := e.Name()
			if strings.HasSuffix(name, ".tmp") { // a checkpoint died mid-write
				os.Remove(filepath.Join(dir, name))
				continue
			}
			if !strings.HasSuffix(name, ".snap") {
				continue
			}
			p, err := readSnapshot(filepath.Join(dir, name), x.cfg.Dim, x.cfg.HNSW)
			if err != nil {
				return fmt.Errorf("snapshot %s is unreadable (%v); restore the directory from a backup or rebuild the index from the system of record", filepath.Join(dir, name), err)
			}
			if p.coll != coll || p.tenant+".snap" != name {
				return fmt.Errorf("snapshot %s holds %s/%s", filepath.Join(dir, name), p.coll, p.tenant)
			}
			x.parts[partitionKey{p.coll, p.tenant}] = p
			maxLSN = max(maxLSN, p.durableLSN)
			if info, err := e.Info(); err == nil {
				total += info.Size()
			}
		}
		x.snapBytes.Add(total)
	}

	w, err := replayWAL(x.cfg.Dir, x.cfg.Dim, x.cfg.Sync == SyncAlways, maxLSN, x.cfg.Logger, func(r record) {
		p := x.partitionLocked(r.coll, r.tenant)
		if r.lsn <= p.durableLSN {
			return // the snapshot has it
		}
		x.apply(p, r)
	})
	if err != nil {
		return err
	}
	x.wal = w
	return nil
}

// writeFileSync writes a small file durably (temporary file, fsync,
// rename, fsync of the directory).
func writeFileSync(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// partitionLocked returns the partition, creating it; x.mu must be held
// for writing, or x not yet shared.
func (x *Index) partitionLocked(c memory.Collection, tenant string) *partition {
	k := partitionKey{c, tenant}
	p := x.parts[k]
	if p == nil {
		p = &partition{coll: c, tenant: tenant, st: newState(x.cfg.Dim, x.cfg.HNSW, tenant)}
		x.parts[k] = p
	}
	return p
}

var errClosed = errors.New("the index is closed")

// partition returns an existing partition, or nil.
func (x *Index) partition(c memory.Collection, tenant string) (*partition, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return nil, errClosed
	}
	return x.parts[partitionKey{c, tenant}], nil
}

// apply applies a logged record to its partition. The caller holds
// p.writeMu (or is recovering).
func (x *Index) apply(p *partition, r record) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch r.op {
	case opUpsert:
		p.st.linkNodes(p.st.upsert(r.docs), x.cfg.Workers)
	case opDelete:
		p.st.delete(r.ids)
	}
	p.lastLSN = r.lsn
}

// Upsert implements memory.VectorIndex. When it returns nil the documents
// are in the log (fsynced under SyncAlways) and visible to searches.
func (x *Index) Upsert(ctx context.Context, c memory.Collection, docs []memory.VectorDoc) error {
	const op = "local: upsert"
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := memory.ValidateCollection(op, c); err != nil {
		return err
	}
	if err := memory.ValidateVectorDocs(op, x.cfg.Dim, docs); err != nil {
		return err
	}
	for _, d := range docs {
		if !finite(d.Vector) {
			return memory.Invalidf(op, "document %s has a vector with NaN or infinite components", d.ID)
		}
	}
	if len(docs) == 0 {
		return nil
	}
	// One record per tenant, holding the last version of each ID.
	byTenant := map[string][]memory.VectorDoc{}
	for _, d := range lastByID(docs) {
		byTenant[d.Tenant] = append(byTenant[d.Tenant], d)
	}
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return fmt.Errorf("%s: %w", op, errClosed)
	}
	var parts []*partition
	for tenant := range byTenant {
		parts = append(parts, x.partitionLocked(c, tenant))
	}
	x.mu.Unlock()
	slices.SortFunc(parts, comparePartitions) // a fixed lock order
	var recs []record
	var targets []*partition
	for _, p := range parts {
		p.writeMu.Lock()
		defer p.writeMu.Unlock()
		for _, chunk := range x.chunks(byTenant[p.tenant]) {
			recs = append(recs, record{op: opUpsert, coll: c, tenant: p.tenant, docs: chunk})
			targets = append(targets, p)
		}
	}
	if _, err := x.wal.append(recs); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	for i, p := range targets {
		x.apply(p, recs[i])
	}
	x.maybeCheckpoint()
	return nil
}

// maxRecordPayload keeps log records far below maxRecord: a large batch is
// logged as several records (which a crash may keep only some of, as it may
// keep only some partitions of a batch; the batch was not acknowledged).
const maxRecordPayload = 32 << 20

// chunks splits documents into runs whose encoding stays around
// maxRecordPayload: a dense vector is 4 bytes a dimension, a sparse entry
// at most 9 bytes, the scalar fields some 256.
func (x *Index) chunks(docs []memory.VectorDoc) [][]memory.VectorDoc {
	return memory.ChunkDocs(docs, maxRecordPayload, 0, func(d memory.VectorDoc) int { return 4*x.cfg.Dim + 256 + 9*d.Sparse.Len() })
}

// lastByID keeps, for every (tenant, ID), only its last document.
func lastByID(docs []memory.VectorDoc) []memory.VectorDoc {
	type key struct{ tenant, id string }
	last := make(map[key]int, len(docs))
	for i, d := range docs {
		last[key{d.Tenant, d.ID}] = i
	}
	if len(last) == len(docs) {
		return docs
	}
	out := make([]memory.VectorDoc, 0, len(last))
	for i, d := range docs {
		if last[key{d.Tenant, d.ID}] == i {
			out = append(out, d)
		}
	}
	return out
}

// Delete implements memory.VectorIndex.
func (x *Index) Delete(ctx context.Context, c memory.Collection, tenant string, ids []string) error {
	const op = "local: delete"
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := memory.ValidateCollection(op, c); err != nil {
		return err
	}
	if err := memory.ValidateTenant(op, tenant); err != nil {
		return err
	}
	p, err := x.partition(c, tenant)
	if err != nil || p == nil {
		return wrapErr(op, err)
	}
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	// Only IDs that exist are logged; readers never change byID, and
	// writers hold writeMu.
	seen := map[string]bool{}
	var present []string
	for _, id := range ids {
		if _, ok := p.st.byID[id]; ok && !seen[id] {
			seen[id] = true
			present = append(present, id)
		}
	}
	if len(present) == 0 {
		return nil
	}
	var recs []record
	for chunk := range slices.Chunk(present, 1<<16) {
		recs = append(recs, record{op: opDelete, coll: c, tenant: tenant, ids: chunk})
	}
	if _, err := x.wal.append(recs); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	for _, r := range recs {
		x.apply(p, r)
	}
	x.maybeCheckpoint()
	return nil
}

func wrapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, err)
}

// Search implements memory.VectorIndex. k < 0 returns every match.
func (x *Index) Search(ctx context.Context, c memory.Collection, vector []float32, f memory.VectorFilter, k int) ([]memory.VectorHit, error) {
	const op = "local: search"
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if err := memory.ValidateCollection(op, c); err != nil {
		return nil, err
	}
	if err := f.Validate(op); err != nil {
		return nil, err
	}
	if len(vector) != x.cfg.Dim {
		return nil, memory.Invalidf(op, "query vector has dimension %d, the index has dimension %d", len(vector), x.cfg.Dim)
	}
	if !finite(vector) {
		return nil, memory.Invalidf(op, "query vector has NaN or infinite components")
	}
	p, err := x.partition(c, f.Tenant)
	if err != nil || p == nil {
		return []memory.VectorHit{}, wrapErr(op, err)
	}
	q := unit(vector)
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.st.search(q, f, k, searchParams{exactThreshold: x.cfg.ExactThreshold, ef: x.cfg.HNSW.EfSearch, stats: &x.stats}), nil
}

// Get implements memory.VectorIndex.
func (x *Index) Get(ctx context.Context, c memory.Collection, tenant string, ids []string) ([]memory.VectorDoc, error) {
	const op = "local: get"
	if err := memory.ValidateCollection(op, c); err != nil {
		return nil, err
	}
	if err := memory.ValidateTenant(op, tenant); err != nil {
		return nil, err
	}
	p, err := x.partition(c, tenant)
	if err != nil || p == nil {
		return []memory.VectorDoc{}, wrapErr(op, err)
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := []memory.VectorDoc{}
	for _, id := range ids {
		if d, ok := p.st.get(id); ok {
			out = append(out, d)
		}
	}
	return out, nil
}

// List implements memory.VectorIndex.
func (x *Index) List(ctx context.Context, c memory.Collection, f memory.VectorFilter, afterID string, limit int) ([]memory.VectorDoc, error) {
	const op = "local: list"
	if err := memory.ValidateCollection(op, c); err != nil {
		return nil, err
	}
	if err := f.Validate(op); err != nil {
		return nil, err
	}
	p, err := x.partition(c, f.Tenant)
	if err != nil || p == nil {
		return []memory.VectorDoc{}, wrapErr(op, err)
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.st.list(f, afterID, limit), nil
}

// maybeCheckpoint wakes the checkpointer once enough log has accumulated.
func (x *Index) maybeCheckpoint() {
	if x.wal.bytesSinceRotate() >= max(x.cfg.SnapshotBytes, x.snapBytes.Load()/2) {
		select {
		case x.ckWanted <- struct{}{}:
		default:
		}
	}
}

func (x *Index) checkpointLoop() {
	for {
		select {
		case <-x.done:
			return
		case <-x.ckWanted:
			if err := x.Checkpoint(); err != nil {
				x.cfg.Logger.Error("local: checkpoint failed; the log keeps every write", "err", err)
			}
		}
	}
}

// Checkpoint snapshots every partition changed since the last checkpoint
// (rebuilding the graph of those with many deleted nodes) and deletes the
// log the snapshots cover. It runs in the background when the log grows;
// searches continue meanwhile, writes to a partition wait for its snapshot.
func (x *Index) Checkpoint() error {
	x.ckMu.Lock()
	defer x.ckMu.Unlock()
	seg, err := x.wal.rotate()
	if err != nil {
		return fmt.Errorf("local: checkpoint: %w", err)
	}
	x.mu.RLock()
	parts := make([]*partition, 0, len(x.parts))
	for _, p := range x.parts {
		parts = append(parts, p)
	}
	x.mu.RUnlock()
	var total int64
	for _, p := range parts {
		n, err := x.snapshot(p)
		if err != nil {
			return fmt.Errorf("local: checkpoint %s/%s: %w", p.coll, p.tenant, err)
		}
		total += n
	}
	// Every record in an older segment was applied before rotate returned
	// (writers hold writeMu from append to apply, and snapshot took each
	// writeMu), so the snapshots cover them all.
	if err := x.wal.removeBefore(seg); err != nil {
		return fmt.Errorf("local: checkpoint: %w", err)
	}
	x.snapBytes.Store(total)
	return nil
}

// snapshot writes p's snapshot if it changed, and returns its size.
func (x *Index) snapshot(p *partition) (int64, error) {
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	changed := p.lastLSN > p.durableLSN
	if fresh := p.st.compacted(x.cfg.Dim, x.cfg.HNSW, p.tenant, x.cfg.Workers); fresh != nil {
		// Built while readers kept using the old state; writers waited.
		p.mu.Lock()
		p.st = fresh
		p.mu.Unlock()
		changed = true
	}
	if !changed {
		info, err := os.Stat(snapshotPath(x.cfg.Dir, p.coll, p.tenant))
		if err != nil {
			return 0, nil // never written: an empty partition
		}
		return info.Size(), nil
	}
	n, err := writeSnapshot(x.cfg.Dir, p, p.lastLSN, x.cfg.Dim)
	if err != nil {
		return 0, err
	}
	p.durableLSN = p.lastLSN
	return n, nil
}

// Close implements memory.VectorIndex. It writes a final checkpoint, so
// that the next Open replays no log.
func (x *Index) Close() error {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return nil
	}
	x.closed = true
	x.mu.Unlock()
	close(x.done)
	x.wg.Wait()
	err := x.Checkpoint()
	if cerr := x.wal.close(); err == nil {
		err = cerr
	}
	if cerr := x.lock.Close(); err == nil {
		err = cerr
	}
	return err
}
