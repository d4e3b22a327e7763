package plan

import (
	"slices"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/internal/memtest"
	"github.com/hindsight-memory/hindsight/memory"
)

func TestDropSourcesKeepsWhatRemains(t *testing.T) {
	m := memtest.Stored("mem_a", memory.KindLesson, "Read the export with encoding='gbk'.", "ep_1", "ep_2")
	m.Evidence = []string{"ev_of_1", "ev_of_2"}
	now := t0.Add(time.Hour)

	d, err := DropSources(op("dec-f", now), m, []string{"ep_1"}, []string{"ev_of_2", "ev_other"})
	if err != nil {
		t.Fatal(err)
	}
	n := d.After[0]
	if n.Version != 2 || !slices.Equal(n.Sources, []string{"ep_2"}) || !slices.Equal(n.Evidence, []string{"ev_of_2"}) ||
		n.Confidence >= m.Confidence || d.Action != memory.ActionForget || d.Before[0].Version != 1 {
		t.Fatalf("dropping one of two sources: %+v", d)
	}
	if again, _ := DropSources(op("dec-f", now), n, []string{"ep_1"}, nil); len(again.After) != 0 {
		t.Fatalf("the same decision again changed %+v", again.After)
	}
	if none, _ := DropSources(op("dec-g", now), m, []string{"ep_9"}, nil); len(none.After) != 0 {
		t.Fatalf("dropping a source the memory lacks changed %+v", none.After)
	}
	all, _ := DropSources(op("dec-h", now), m, []string{"ep_1", "ep_2"}, []string{"ev_of_2"})
	if len(all.After[0].Sources) != 0 || len(all.After[0].Evidence) != 0 {
		t.Fatalf("dropping every source kept %v, %v", all.After[0].Sources, all.After[0].Evidence)
	}
	if tomb := Tombstone(m, now); tomb.Content != "" || tomb.Version != 2 || tomb.Status != memory.StatusForgotten {
		t.Fatalf("tombstone = %+v", tomb)
	}
}
