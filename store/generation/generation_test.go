package generation_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hindsight-memory/hindsight/llm/offline"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/store/generation"
)

// A recorded generation whose index has an older layout (Milvus's without
// the sparse field refuses to open with EINVALID) gives way to the
// configured generation, which is recorded and reported unfilled so the
// Reindex workflow fills it; the tokenizer is part of its name.
func TestOutdatedRecordedGenerationGivesWay(t *testing.T) {
	ctx := context.Background()
	store := memory.NewMemStore()
	emb := offline.NewEmbedder(64)
	old, _ := json.Marshal(map[string]any{"name": generation.Name(emb.Model()), "model": emb.Model(), "dim": 64})
	if err := store.PutSetting(ctx, generation.Setting, string(old)); err != nil {
		t.Fatal(err)
	}
	var opened []string
	set, err := generation.Open(ctx, generation.Config{
		Store: store, Embedder: emb, Tokenizer: "bm25-test-1",
		OpenIndex: func(_ context.Context, name string, dim int) (memory.VectorIndex, error) {
			opened = append(opened, name)
			if name == generation.Name(emb.Model()) {
				return nil, memory.Invalidf("milvus: open", "collection has no sparse field: rebuild the index generation")
			}
			return memory.NewMemIndex(dim), nil
		},
		EmbedderFor: func(string) (memory.Embedder, error) { return emb, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	want := generation.Name(emb.Model() + " bm25-test-1")
	if got := set.Active().Name; got != want {
		t.Errorf("active generation %s, want %s (opened %v)", got, want, opened)
	}
	if !set.Unfilled() {
		t.Error("the generation that replaced an unusable one is not reported unfilled")
	}
	raw, _ := store.Setting(ctx, generation.Setting)
	var rec struct{ Name string }
	if err := json.Unmarshal([]byte(raw), &rec); err != nil || rec.Name != want {
		t.Errorf("recorded %s (%v), want %s", raw, err, want)
	}

	// An error that is not about the layout (the server is down) fails
	// the start instead: switching would serve from an empty index.
	if err := store.PutSetting(ctx, generation.Setting, string(old)); err != nil {
		t.Fatal(err)
	}
	_, err = generation.Open(ctx, generation.Config{
		Store: store, Embedder: emb, Tokenizer: "bm25-test-1",
		OpenIndex: func(_ context.Context, name string, dim int) (memory.VectorIndex, error) {
			if name == generation.Name(emb.Model()) {
				return nil, context.DeadlineExceeded
			}
			return memory.NewMemIndex(dim), nil
		},
		EmbedderFor: func(string) (memory.Embedder, error) { return emb, nil },
	})
	if err == nil {
		t.Error("Open succeeded although the recorded generation's index could not be reached")
	}
}
