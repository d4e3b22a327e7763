package offline

import (
	"context"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/examples"
	"github.com/hindsight-memory/hindsight/memory"
)

// BenchmarkExtract distils each example transcript (18 events or so).
func BenchmarkExtract(b *testing.B) {
	for _, s := range examples.All() {
		tr, err := memory.ParseTranscript(s.Data, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := tr.Normalize("default", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)); err != nil {
			b.Fatal(err)
		}
		b.Run(s.Name, func(b *testing.B) {
			x := NewExtractor()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := x.Extract(ctx, tr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExtractLong distils a 2,000-event session.
func BenchmarkExtractLong(b *testing.B) {
	var events []memory.Event
	for i := range 500 {
		events = append(events,
			memory.Event{Role: memory.RoleUser, Content: "Load part.csv next, and from now on always log the row count."},
			memory.Event{Role: memory.RoleTool, ToolName: "python", ToolArgs: `{"code":"pd.read_csv('part.csv', encoding='utf-8')"}`, Error: "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xb5"},
			memory.Event{Role: memory.RoleTool, ToolName: "python", ToolArgs: `{"code":"pd.read_csv('part.csv', encoding='gbk')"}`, ToolResult: "ok"},
			memory.Event{Role: memory.RoleAssistant, Content: "Loaded part " + string(rune('a'+i%26)) + "."},
		)
	}
	tr := memory.Transcript{SessionID: "long", Tenant: "acme", Events: events}
	if err := tr.Normalize("default", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		b.Fatal(err)
	}
	x := NewExtractor()
	for b.Loop() {
		if _, err := x.Extract(context.Background(), tr); err != nil {
			b.Fatal(err)
		}
	}
}
