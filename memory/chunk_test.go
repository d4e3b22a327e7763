package memory

import (
	"fmt"
	"testing"
)

func TestChunkDocs(t *testing.T) {
	docs := make([]VectorDoc, 7)
	for i := range docs {
		docs[i].ID = fmt.Sprint(i)
	}
	size := func(d VectorDoc) int { return map[string]int{"2": 50}[d.ID] + 10 }
	lens := func(cs [][]VectorDoc) []int {
		var out []int
		for _, c := range cs {
			out = append(out, len(c))
		}
		return out
	}
	for _, tc := range []struct {
		maxBytes, maxDocs int
		want              string
	}{
		{30, 0, "[2 1 3 1]"},      // 10+10; 60 alone (over the bound, still one); then by bytes
		{1000, 3, "[3 3 1]"},      // by count
		{1000, 0, "[7]"},          // one run
		{5, 0, "[1 1 1 1 1 1 1]"}, // every document too big: one each
	} {
		if got := fmt.Sprint(lens(ChunkDocs(docs, tc.maxBytes, tc.maxDocs, size))); got != tc.want {
			t.Errorf("ChunkDocs(bytes %d, docs %d) = %s, want %s", tc.maxBytes, tc.maxDocs, got, tc.want)
		}
	}
	if n := len(ChunkDocs(nil, 10, 0, size)); n != 0 {
		t.Errorf("no documents gave %d runs", n)
	}
}
