package redact

import (
	"os"
	"testing"
)

// BenchmarkRedact redacts a coding agent's tool-heavy session log, read
// as one text (every field of a session passes through String).
func BenchmarkRedact(b *testing.B) {
	raw, err := os.ReadFile("../testdata/claude-code/tool_heavy.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	text := string(raw)
	r := New(testKey, nil)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		r.String(text)
	}
}
