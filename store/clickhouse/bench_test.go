package clickhouse_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// Benchmarks run on the embedded engine, like the acceptance suite:
//
//	go test ./store/clickhouse/ -run '^$' -bench . -benchtime 200x
//
// They report rows/s for event ingest, and p50/p99 latencies (ms) of the
// episode query by tenant and time range over 1M stored events.

const (
	benchTenants  = 10
	benchSessions = 5000 // per tenant
	benchEvents   = 20   // per session: 10 × 5000 × 20 = 1M events
	benchBatch    = 20000
)

var benchStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

var benchTexts = []string{
	"Parse the sales CSV; the first attempt failed with a UnicodeDecodeError",
	"以后所有报表都用 UTC 时间，不要用本地时间",
	"Run the migration again with --dry-run first and compare the plans",
	"用户说导出的 Excel 里日期格式不对，需要改成 ISO 8601",
}

// benchSession returns the events of one session of one tenant; sessions
// are spread over 180 days.
func benchSession(tenant string, n int) ([]memory.Event, time.Time) {
	start := benchStart.Add(time.Duration(n) * (180 * 24 * time.Hour / benchSessions))
	session := fmt.Sprintf("s%05d", n)
	evs := make([]memory.Event, benchEvents)
	for i := range evs {
		evs[i] = memory.Event{
			ID: memory.EventID(tenant, session, i), Tenant: tenant, SessionID: session, UserID: "u1", Seq: i,
			Role: memory.RoleUser, Content: benchTexts[(n+i)%len(benchTexts)], TS: start.Add(time.Duration(i) * time.Second),
		}
	}
	return evs, evs[len(evs)-1].TS
}

func BenchmarkIngestEvents(b *testing.B) {
	ctx := context.Background()
	s := openChDB(b, "")
	n := 0
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		var batch []memory.Event
		for len(batch) < benchBatch {
			evs, _ := benchSession("t0", n)
			batch = append(batch, evs...)
			n++
		}
		if err := s.AppendEvents(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*benchBatch)/time.Since(start).Seconds(), "rows/s")
}

// bench1M is the database holding the 1M-event data set; the benchmark
// function runs more than once per process and loads it only the first time.
var bench1M string

func BenchmarkEpisodeQuery1M(b *testing.B) {
	ctx := context.Background()
	if bench1M != "" {
		measureEpisodeQuery(b, openChDB(b, bench1M))
		return
	}
	bench1M = freshDatabase("bench1m")
	s := openChDB(b, bench1M)
	loadStart := time.Now()
	var batch []memory.Event
	var eps []memory.Episode
	for t := range benchTenants {
		tenant := fmt.Sprintf("tenant%02d", t)
		for n := range benchSessions {
			evs, ended := benchSession(tenant, n)
			batch = append(batch, evs...)
			eps = append(eps, memory.Episode{
				ID: memory.EpisodeID(tenant, evs[0].SessionID), Tenant: tenant, SessionID: evs[0].SessionID,
				Task: evs[0].Content, TaskType: fmt.Sprint("type", n%7), Outcome: memory.OutcomeSuccess,
				StartedAt: evs[0].TS, EndedAt: ended, EventCount: len(evs), Status: memory.EpisodeLive, CreatedAt: ended,
			})
			if len(batch) >= benchBatch {
				if err := s.AppendEvents(ctx, batch); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
		}
	}
	if err := s.PutEpisodes(ctx, eps); err != nil {
		b.Fatal(err)
	}
	b.Logf("loaded %d events and %d episodes in %v", benchTenants*benchSessions*benchEvents, len(eps), time.Since(loadStart))
	measureEpisodeQuery(b, s)
}

// measureEpisodeQuery times Episodes for one tenant over a random week.
func measureEpisodeQuery(b *testing.B, s memory.EpisodicStore) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		tenant := fmt.Sprintf("tenant%02d", rng.IntN(benchTenants))
		since := benchStart.Add(time.Duration(rng.IntN(173*24)) * time.Hour)
		t0 := time.Now()
		got, err := s.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, Since: since, Until: since.Add(7 * 24 * time.Hour), Limit: 100})
		lat = append(lat, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		if len(got) == 0 {
			b.Fatalf("no episodes of %s in the week from %s", tenant, since)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
