package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestBenchRecallReports runs bench recall on a small tenant made of the
// repository's scenario corpus alone (no LoCoMo file) and checks that it
// measured every path it reports: keyword and hybrid recall, the exact
// scan, in process and over MCP, and stage shares that account for the
// hybrid recalls' time.
func TestBenchRecallReports(t *testing.T) {
	var out, errOut bytes.Buffer
	args := []string{"bench", "recall", "--memories", "400", "--mcp-at", "200", "--queries", "30", "--json",
		"--scenarios", filepath.Join("..", "..", "testdata", "scenarios", "multiuser.json"),
		"--locomo", filepath.Join(t.TempDir(), "none.json"), "--data-dir", t.TempDir()}
	if code := run(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("bench recall exited %d: %s", code, errOut.String())
	}
	var res recallBenchResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("output is not the result: %v\n%s", err, out.String())
	}
	if res.Memories != 400 || res.Queries != 30 || res.MCPAt != 200 {
		t.Fatalf("ran %d memories, %d queries, MCP at %d; asked for 400, 30, 200", res.Memories, res.Queries, res.MCPAt)
	}
	for name, v := range map[string]float64{
		"keyword_p99_ms": res.KeywordP99Ms, "hybrid_p50_ms": res.HybridP50Ms, "hybrid_p99_ms": res.HybridP99Ms,
		"exact_scan_ms": res.ExactScanMs, "inprocess_p99_ms_10k": res.InProcessP99Ms10k, "mcp_p99_ms_10k": res.MCPP99Ms10k,
		"rss_mb": res.RSSMB,
	} {
		if v <= 0 {
			t.Errorf("%s = %v, want a measurement", name, v)
		}
	}
	if res.HybridP50Ms > res.HybridP99Ms {
		t.Errorf("hybrid p50 %v above its p99 %v", res.HybridP50Ms, res.HybridP99Ms)
	}
	sum := 0.0
	for _, name := range []string{"parse", "store", "keyword", "vector", "fuse", "relevance", "rerank", "conflicts", "provenance", "render"} {
		share, ok := res.Stages[name]
		if !ok {
			t.Errorf("no share for stage %s", name)
		}
		sum += share
	}
	// The stages are laps of one clock over the recall, which Took times
	// from just before the first to just after the last.
	if sum < 0.9 || sum > 1.001 {
		t.Errorf("stage shares sum to %.3f, want about 1: %v", sum, res.Stages)
	}
	for _, name := range []string{"vector", "keyword", "rerank"} {
		if res.Stages[name] <= 0 {
			t.Errorf("stage %s took no time: %v", name, res.Stages)
		}
	}
}
