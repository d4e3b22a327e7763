package local

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/memory/storetest"
)

func TestHybridAcceptance(t *testing.T) {
	storetest.TestHybridSearcher(t, func(t *testing.T, dim int) memory.HybridSearcher {
		return open(t, Config{Dim: dim})
	})
}

// TestHybridAcceptanceGraph answers the dense side through the graph.
func TestHybridAcceptanceGraph(t *testing.T) {
	storetest.TestHybridSearcher(t, func(t *testing.T, dim int) memory.HybridSearcher {
		return open(t, Config{Dim: dim, ExactThreshold: 1})
	})
}

// TestHybridAcceptanceReopened reopens from the log alone after every
// write, so that sparse vectors must survive the log's encoding.
func TestHybridAcceptanceReopened(t *testing.T) {
	storetest.TestHybridSearcher(t, func(t *testing.T, dim int) memory.HybridSearcher {
		return reopeningHybrid{&reopening{t: t, dir: t.TempDir(), dim: dim}}
	})
}

// TestHybridAcceptanceSnapshots checkpoints and reopens from the snapshots
// alone after every write, so that sparse vectors must survive them too.
func TestHybridAcceptanceSnapshots(t *testing.T) {
	storetest.TestHybridSearcher(t, func(t *testing.T, dim int) memory.HybridSearcher {
		return snapshotting{reopeningHybrid{&reopening{t: t, dir: t.TempDir(), dim: dim}}}
	})
}

type reopeningHybrid struct{ *reopening }

func (r reopeningHybrid) HybridSearch(ctx context.Context, c memory.Collection, q memory.HybridQuery) ([]memory.HybridHit, error) {
	return r.index().HybridSearch(ctx, c, q)
}

// snapshotting checkpoints after every write, then reopens: the log it
// replays is empty.
type snapshotting struct{ reopeningHybrid }

func (s snapshotting) checkpoint() {
	s.t.Helper()
	if err := s.index().Checkpoint(); err != nil {
		s.t.Fatal(err)
	}
	if seqs, _ := segments(s.dir); len(seqs) != 1 {
		s.t.Fatalf("segments after a checkpoint: %v", seqs)
	}
	s.crash()
}

func (s snapshotting) Upsert(ctx context.Context, c memory.Collection, docs []memory.VectorDoc) error {
	err := s.index().Upsert(ctx, c, docs)
	s.checkpoint()
	return err
}

func (s snapshotting) Delete(ctx context.Context, c memory.Collection, tenant string, ids []string) error {
	err := s.index().Delete(ctx, c, tenant, ids)
	s.checkpoint()
	return err
}

// copyDir copies a fixture directory, which Open would change, into a
// fresh one.
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	err := filepath.WalkDir(from, func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if e.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// TestOpensVersion2 opens testdata/v2, written by the index before sparse
// vectors existed: version 2 snapshots of memories m1-m3 and episode e1,
// then a log that adds m4 and deletes m2. Everything reads back without
// sparse vectors, and new documents with them are added next to the old.
func TestOpensVersion2(t *testing.T) {
	ctx := context.Background()
	dir := copyDir(t, filepath.Join("testdata", "v2"))
	if b, _ := os.ReadFile(filepath.Join(dir, "snap", "memories", "acme.snap")); !bytes.HasPrefix(b, []byte("HSLX\x02\x00\x00\x00")) {
		t.Fatalf("the fixture is not a version 2 snapshot: %q", b[:min(8, len(b))])
	}
	x := open(t, Config{Dir: dir, Dim: 4})
	at := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	want := func(id string, v []float32) memory.VectorDoc {
		return memory.VectorDoc{ID: id, Tenant: "acme", Vector: v, Scope: memory.UserScope("u-1"), Kind: memory.KindLesson,
			TaskType: "report", Status: "live", Confidence: 0.75, Decay: 0.5, CreatedAt: at, UpdatedAt: at.Add(time.Hour),
			RecallCount: 2, Pinned: true, Entities: []string{"csv", "utc"}}
	}
	got, err := x.Get(ctx, memory.CollectionMemories, "acme", []string{"m1", "m2", "m3", "m4"})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b memory.VectorDoc) int { return strings.Compare(a.ID, b.ID) })
	wantDocs := []memory.VectorDoc{want("m1", []float32{1, 0, 0, 0}), want("m3", []float32{0, 0, 1, 0}), want("m4", []float32{1, 1, 0, 0})}
	if len(got) != len(wantDocs) {
		t.Fatalf("Get = %+v", got)
	}
	for i := range got {
		if !sameDoc(got[i], wantDocs[i]) {
			t.Fatalf("old document %d = %+v, want %+v", i, got[i], wantDocs[i])
		}
	}
	ep, err := x.Get(ctx, memory.CollectionEpisodes, "acme", []string{"e1"})
	if err != nil || len(ep) != 1 || !ep[0].Sparse.IsZero() || ep[0].Status != "live" {
		t.Fatalf("old episode = %+v, %v", ep, err)
	}

	// Old documents answer the dense side only; a new one, with terms, both.
	fresh := want("m5", []float32{0, 0, 0, 1})
	fresh.Sparse = memory.SparseVector{Indices: []uint32{7, memory.MaxSparseIndex}, Values: []float32{1.5, 2}}
	if err := x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{fresh}); err != nil {
		t.Fatal(err)
	}
	q := memory.HybridQuery{Filter: memory.VectorFilter{Tenant: "acme"}, Dense: []float32{1, 0, 0, 0},
		Sparse: memory.SparseVector{Indices: []uint32{7}, Values: []float32{1}}, PerSide: 2, DenseWeight: 0.5}
	check := func(x *Index) {
		t.Helper()
		hits, err := x.HybridSearch(ctx, memory.CollectionMemories, q)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]memory.HybridHit{}
		for _, h := range hits {
			ids[h.Doc.ID] = h
		}
		if len(hits) != 3 || ids["m1"].DenseRank != 1 || ids["m4"].DenseRank != 2 || ids["m5"].SparseRank != 1 || ids["m5"].Sparse != 1.5 {
			t.Fatalf("hybrid search over old and new documents = %+v", hits)
		}
	}
	check(x)
	if err := x.Close(); err != nil { // writes version 3 snapshots
		t.Fatal(err)
	}
	y := open(t, Config{Dir: dir, Dim: 4})
	check(y)
	if b, _ := os.ReadFile(filepath.Join(dir, "snap", "memories", "acme.snap")); !bytes.HasPrefix(b, []byte("HSLX\x03\x00\x00\x00")) {
		t.Fatalf("the snapshot after Close is not version 3: %q", b[:min(8, len(b))])
	}
}

func TestSparseCodec(t *testing.T) {
	d := memory.VectorDoc{ID: "m1", Status: "live", Sparse: memory.SparseVector{
		Indices: []uint32{0, 1, 300, 1 << 31, memory.MaxSparseIndex},
		Values:  []float32{0, 1e-20, 2.5, float32(math.MaxFloat32), 1},
	}}
	b := appendDoc(nil, d)
	dec := &decoder{r: bytes.NewReader(b)}
	got := dec.doc("acme")
	if dec.err != nil || !slices.Equal(got.Sparse.Indices, d.Sparse.Indices) || !slices.Equal(got.Sparse.Values, d.Sparse.Values) {
		t.Fatalf("round trip = %+v, %v", got.Sparse, dec.err)
	}
	// Without a sparse vector the encoding is the one written before
	// sparse vectors existed.
	d.Sparse = memory.SparseVector{}
	if old := appendDoc(nil, d); old[len(old)-2]&flagSparse != 0 || len(old) >= len(b) {
		t.Fatalf("a document without a sparse vector encodes one: % x", old)
	}

	corrupt := func(name string, sparse []byte) {
		t.Helper()
		d := memory.VectorDoc{ID: "m1", Status: "live"}
		b := appendDoc(nil, d)
		b[len(b)-2] |= flagSparse // the flags byte, before the entity count
		b = append(b, sparse...)
		dec := &decoder{r: bytes.NewReader(b)}
		dec.doc("acme")
		if dec.err == nil {
			t.Errorf("%s: decoded without an error", name)
		}
	}
	f32 := []byte{0, 0, 0x80, 0x3f} // 1.0
	corrupt("empty", []byte{0})
	corrupt("repeated index", slices.Concat([]byte{2, 5}, f32, []byte{0}, f32))
	corrupt("index past the maximum", slices.Concat([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f}, f32))
	corrupt("gaps adding up past the maximum", slices.Concat([]byte{2, 0xfe, 0xff, 0xff, 0xff, 0x0f}, f32, []byte{2}, f32))
	corrupt("truncated", []byte{3, 1})
}
