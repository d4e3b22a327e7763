package consolidate_test

import (
	"fmt"
	"time"

	"github.com/hindsight-memory/hindsight/consolidate"
	"github.com/hindsight-memory/hindsight/memory"
)

// The weekly consolidation of one tenant, without the I/O: cluster the old
// episodes, write each cluster's typical episode, and find the lessons to
// merge.
func Example() {
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	episode := func(n int, file string) memory.Episode {
		return memory.Episode{
			ID: fmt.Sprintf("ep_%d", n), Tenant: "acme", TaskType: "data-import", Status: memory.EpisodeLive,
			Task:      "Import " + file + " into the sales table",
			Steps:     []string{fmt.Sprintf("python: df = pd.read_csv('%s', encoding='gbk') → %d rows", file, 100*n)},
			Failures:  []memory.Failure{{Attempt: fmt.Sprintf("python: df = pd.read_csv('%s', encoding='utf-8')", file), Cause: "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xb5"}},
			Outcome:   memory.OutcomeSuccess,
			StartedAt: start.AddDate(0, 0, 7*n), EndedAt: start.AddDate(0, 0, 7*n).Add(time.Hour),
		}
	}
	// Vectors come from the episodes collection; two dimensions here.
	items := []consolidate.Item{
		{Episode: episode(1, "jan.csv"), Vector: []float32{1, 0.1}},
		{Episode: episode(2, "feb.csv"), Vector: []float32{1, 0.12}},
		{Episode: episode(3, "mar.csv"), Vector: []float32{1, 0.09}},
	}
	clusters, err := consolidate.Cluster(items, consolidate.ClusterConfig{Threshold: consolidate.DefaultThreshold})
	if err != nil {
		panic(err)
	}
	for _, c := range clusters {
		var members []memory.Episode
		for _, i := range c {
			members = append(members, items[i].Episode)
		}
		typical, err := consolidate.SummarizeOffline("acme", members, start.AddDate(0, 3, 0))
		if err != nil {
			panic(err)
		}
		fmt.Println(typical.Task)
		fmt.Println(typical.Steps[0])
		fmt.Println(typical.Failures[0].Attempt)
		fmt.Println(typical.Feedback[0])
		fmt.Println(typical.SourceEpisodes)

		lessons, err := consolidate.Promotions("acme", members, consolidate.PromoteConfig{})
		if err != nil {
			panic(err)
		}
		for _, l := range lessons {
			fmt.Println(l.Candidate.Content, l.Sources)
		}
	}
	// Output:
	// Import jan.csv into the sales table
	// python: df = pd.read_csv('jan.csv', encoding='gbk') (3/3)
	// python: df = pd.read_csv('jan.csv', encoding='utf-8') (3/3)
	// outcomes: 3 success; 2026-01-12 → 2026-01-26
	// [ep_1 ep_2 ep_3]
	// When calling `pd.read_csv`, use encoding='gbk'; encoding='utf-8' failed with UnicodeDecodeError. [ep_1 ep_2 ep_3]
}
