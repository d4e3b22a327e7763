package merge

import (
	"testing"

	"github.com/hindsight-memory/hindsight/memory"
)

func TestPrefilter(t *testing.T) {
	n := func(id string, status memory.Status, sim float64) memory.Neighbor {
		return memory.Neighbor{Memory: memory.Memory{ID: id, Status: status}, Similarity: sim}
	}
	in := []memory.Neighbor{
		n("b", memory.StatusLive, 0.90),
		n("low", memory.StatusLive, 0.84),
		n("old", memory.StatusSuperseded, 0.99),
		n("a", memory.StatusLive, 0.90),
		n("c", memory.StatusLive, 0.97),
		n("b", memory.StatusLive, 0.93), // the same memory from a second search
		n("cold", memory.StatusCold, 0.95),
	}
	got := Prefilter(in, 0.85, 0)
	var ids []string
	for _, x := range got {
		ids = append(ids, x.Memory.ID)
	}
	if want := []string{"c", "b", "a"}; len(ids) != 3 || ids[0] != want[0] || ids[1] != want[1] || ids[2] != want[2] {
		t.Fatalf("got %v, want %v", ids, want)
	}
	if got[1].Similarity != 0.93 {
		t.Errorf("a memory seen twice keeps its best similarity, got %v", got[1].Similarity)
	}
	if got := Prefilter(in, 0.85, 2); len(got) != 2 || got[1].Memory.ID != "b" {
		t.Errorf("max 2: %+v", got)
	}
	if got := Prefilter(nil, 0.85, 5); len(got) != 0 {
		t.Errorf("no neighbours: %+v", got)
	}
	if in[0].Similarity != 0.90 || in[0].Memory.ID != "b" {
		t.Error("Prefilter changed its input")
	}
}

func TestThresholdFor(t *testing.T) {
	if got := ThresholdFor("offline-ngram-v1-d384"); got != OfflineThreshold {
		t.Errorf("offline embedder: %v", got)
	}
	if got := ThresholdFor("text-embedding-3-small"); got != DefaultThreshold {
		t.Errorf("neural embedder: %v", got)
	}
}
