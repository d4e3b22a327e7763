package merge_test

import (
	"context"
	"fmt"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/merge"
	"github.com/hindsight-memory/hindsight/plan"
)

// A candidate from a later session contradicts a stored preference: the
// offline judge calls it a conflict, and the plan supersedes the old memory.
func Example() {
	now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	old := memory.Memory{
		ID: "mem_utc", Tenant: "acme", Version: 1, Kind: memory.KindPreference,
		Content: "报表用 UTC 时间。", Sources: []string{"ep_1"}, Status: memory.StatusLive,
		Confidence: 0.5, Decay: 1, DecayAnchor: now.Add(-72 * time.Hour),
	}
	c := memory.Candidate{Kind: memory.KindPreference, Content: "报表用北京时间。"}

	neighbors := merge.Prefilter([]memory.Neighbor{{Memory: old, Similarity: 0.91}}, merge.DefaultThreshold, merge.DefaultMaxNeighbors)
	j, _ := merge.NewOfflineJudge(merge.OfflineOptions{}).Judge(context.Background(), c, neighbors)
	fmt.Println(j.Verdict, j.TargetID, "-", j.Reason)

	d, _ := plan.Merge(plan.MergeInput{
		Op:     plan.Op{DecisionID: "dec_1", WorkflowID: "session-end/acme/s2", Now: now},
		Tenant: "acme", EpisodeID: "ep_2", Candidate: c, Neighbors: neighbors, Judgement: j,
	})
	for _, m := range d.After {
		fmt.Printf("%s v%d %s confidence %.2f superseded_by=%q\n", m.Content, m.Version, m.Status, m.Confidence, m.SupersededBy)
	}
	// Output:
	// conflicts mem_utc - same subject "报表", timezone differs: utc 时间 vs 北京时间
	// 报表用 UTC 时间。 v2 superseded confidence 0.25 superseded_by="mem_c80d6e0f5e976cfa3777230e"
	// 报表用北京时间。 v1 live confidence 0.50 superseded_by=""
}
