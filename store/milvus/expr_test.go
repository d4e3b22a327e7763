package milvus

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

func TestBuildExpr(t *testing.T) {
	at := time.Date(2026, 3, 2, 9, 30, 15, 123_000_000, time.UTC)
	ms := strconv.FormatInt(at.UnixMilli(), 10)
	tests := []struct {
		name string
		sel  selection
		want string
	}{
		{"tenant only", selection{filter: memory.VectorFilter{Tenant: "acme"}},
			`tenant == "acme"`},
		{"every field", selection{filter: memory.VectorFilter{
			Tenant: "acme", Kinds: []memory.Kind{memory.KindLesson, memory.KindRule}, TaskType: "report",
			Statuses: []string{"live"}, MinConfidence: 0.5, Entities: []string{"csv", "utc"},
			CreatedAfter: at, CreatedBefore: at.Add(time.Hour),
		}},
			`tenant == "acme" && kind in ["lesson", "rule"] && task_type == "report" && status in ["live"] && ` +
				`confidence >= 0.5 && array_contains_any(entities, ["csv", "utc"]) && created_at >= ` + ms +
				` && created_at < ` + strconv.FormatInt(at.Add(time.Hour).UnixMilli(), 10)},
		{"ids and cursor", selection{filter: memory.VectorFilter{Tenant: "acme"}, ids: []string{"m1", `m"2`}, afterID: "m0"},
			`tenant == "acme" && pk in ["acme/m1", "acme/m\"2"] && pk > "acme/m0"`},
		{"small confidence stays decimal", selection{filter: memory.VectorFilter{Tenant: "a", MinConfidence: 1e-7}},
			`tenant == "a" && confidence >= 0.0000001`},
		{"negative min confidence does not filter", selection{filter: memory.VectorFilter{Tenant: "a", MinConfidence: -1}},
			`tenant == "a"`},
		{"sub-millisecond bounds round up", selection{filter: memory.VectorFilter{Tenant: "a", CreatedAfter: at.Add(1), CreatedBefore: at.Add(time.Millisecond)}},
			`tenant == "a" && created_at >= ` + strconv.FormatInt(at.UnixMilli()+1, 10) + ` && created_at < ` + strconv.FormatInt(at.UnixMilli()+1, 10)},
		{"pre-1970 times", selection{filter: memory.VectorFilter{Tenant: "a", CreatedAfter: time.Date(1969, 12, 31, 23, 59, 59, 999_500_000, time.UTC)}},
			`tenant == "a" && created_at >= 0`},
		// Injection attempts: each value stays one string literal.
		{"quote and or", selection{filter: memory.VectorFilter{Tenant: "acme", TaskType: `x" || tenant != "`}},
			`tenant == "acme" && task_type == "x\" || tenant != \""`},
		{"backslash before quote", selection{filter: memory.VectorFilter{Tenant: "acme", TaskType: `x\" || true || "`}},
			`tenant == "acme" && task_type == "x\\\" || true || \""`},
		{"single quotes and brackets", selection{filter: memory.VectorFilter{Tenant: "acme", Entities: []string{`o'brien"]) || (1 == 1`}}},
			`tenant == "acme" && array_contains_any(entities, ["o'brien\"]) || (1 == 1"])`},
		{"control characters and newlines", selection{filter: memory.VectorFilter{Tenant: "acme", Statuses: []string{"live\n\x00\" or \"1"}}},
			`tenant == "acme" && status in ["live\n\x00\" or \"1"]`},
		{"kind injection", selection{filter: memory.VectorFilter{Tenant: "acme", Kinds: []memory.Kind{`lesson"] || kind in ["`}}},
			`tenant == "acme" && kind in ["lesson\"] || kind in [\""]`},
		{"cursor injection", selection{filter: memory.VectorFilter{Tenant: "acme"}, afterID: `" || pk != "`},
			`tenant == "acme" && pk > "acme/\" || pk != \""`},
		{"unicode stays readable", selection{filter: memory.VectorFilter{Tenant: "acme", Entities: []string{"报表"}}},
			`tenant == "acme" && array_contains_any(entities, ["报表"])`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := buildExpr(tt.sel)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("buildExpr =\n %s\nwant\n %s", got, tt.want)
			}
		})
	}
}

func TestBuildExprRejects(t *testing.T) {
	tests := []struct {
		name string
		sel  selection
		want string
	}{
		{"no tenant", selection{}, "tenant"},
		{"tenant with a quote", selection{filter: memory.VectorFilter{Tenant: `a" || tenant != "b`}}, "tenant"},
		{"tenant with a slash", selection{filter: memory.VectorFilter{Tenant: "a/b"}}, "tenant"},
		{"empty id list", selection{filter: memory.VectorFilter{Tenant: "a"}, ids: []string{}}, "empty ID list"},
		{"infinite confidence", selection{filter: memory.VectorFilter{Tenant: "a", MinConfidence: math.Inf(1)}}, "finite"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := buildExpr(tt.sel)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("buildExpr = %q, %v; want an error mentioning %q", got, err, tt.want)
			}
		})
	}
}

func TestQuoteRoundTrips(t *testing.T) {
	// Milvus decodes double-quoted literals with strconv.Unquote.
	for _, s := range []string{"", `"`, `\`, `\"`, "a\x00b", "\xff\xfe", "tab\there", "报表", "emoji 😀", "\u2028"} {
		got, err := strconv.Unquote(quote(s))
		if err != nil || got != s {
			t.Errorf("Unquote(quote(%q)) = %q, %v", s, got, err)
		}
	}
}

func TestMilliRounding(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		t          time.Time
		floor, cel int64
	}{
		{at, at.UnixMilli(), at.UnixMilli()},
		{at.Add(1), at.UnixMilli(), at.UnixMilli() + 1},
		{at.Add(-1), at.UnixMilli() - 1, at.UnixMilli()},
		{time.Unix(0, -1), -1, 0},
	} {
		if got := toMilli(tt.t); got != tt.floor {
			t.Errorf("toMilli(%v) = %d, want %d", tt.t, got, tt.floor)
		}
		if got := ceilMilli(tt.t); got != tt.cel {
			t.Errorf("ceilMilli(%v) = %d, want %d", tt.t, got, tt.cel)
		}
	}
	if got := fromMilli(toMilli(at)); !got.Equal(at) || got.Location() != time.UTC {
		t.Errorf("fromMilli(toMilli(%v)) = %v", at, got)
	}
	var zero time.Time
	if got := fromMilli(toMilli(zero)); !got.IsZero() {
		t.Errorf("zero time round trip = %v", got)
	}
}
