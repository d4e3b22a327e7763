package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hindsight-memory/hindsight/service"
)

func TestArgsAcceptNumbersAsText(t *testing.T) {
	a := args{"n": "5", "f": float64(7), "j": json.Number("3"), "c": " 0.5 ", "bad": "lots", "frac": 2.5, "list": []any{1.0}}
	for _, tt := range []struct {
		name string
		want int
		err  string
	}{
		{"n", 5, ""}, {"f", 7, ""}, {"j", 3, ""}, {"missing", 9, ""},
		{"bad", 0, `n must`}, {"frac", 0, "between 1 and 10"}, {"list", 0, "got a list"},
	} {
		got, err := a.integer(tt.name, 9, 1, 10)
		if tt.err == "" && (err != nil || got != tt.want) {
			t.Errorf("integer(%s) = %d, %v, want %d", tt.name, got, err, tt.want)
		}
		if tt.err != "" && (err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(tt.err, "n must"))) {
			t.Errorf("integer(%s) = %v, want an error mentioning %q", tt.name, err, tt.err)
		}
	}
	if _, err := a.integer("n", 0, 1, 4); err == nil || !strings.Contains(err.Error(), "between 1 and 4") {
		t.Errorf("out of range = %v", err)
	}
	if f, err := a.number("c", 0, 0, 1); err != nil || f != 0.5 {
		t.Errorf("number(c) = %v, %v", f, err)
	}
	if _, err := a.number("f", 0, 0, 1); err == nil {
		t.Error("number above its bound accepted")
	}
}

// TestArgsRefuseOtherTypes accepts booleans sent as text ("true") but
// refuses numbers where a boolean or text is expected: helped: 2 is not
// true, and content: 42 is not the text "42".
func TestArgsRefuseOtherTypes(t *testing.T) {
	a := args{"t": "TRUE", "f": " false", "two": float64(2), "one": float64(1), "yes": "yes", "num": float64(42), "b": true, "s": "text"}
	for name, want := range map[string]bool{"t": true, "f": false, "b": true} {
		if got, err := a.boolean(name, !want); err != nil || got != want {
			t.Errorf("boolean(%s) = %v, %v, want %v", name, got, err, want)
		}
	}
	for _, name := range []string{"two", "one", "yes", "s"} {
		if _, err := a.boolean(name, false); err == nil || !strings.Contains(err.Error(), "true or false") {
			t.Errorf("boolean(%s) = %v, want an error", name, err)
		}
	}
	for _, name := range []string{"num", "b"} {
		if _, err := a.str(name, false); err == nil || !strings.Contains(err.Error(), "must be a string") {
			t.Errorf("str(%s) = %v, want an error", name, err)
		}
	}
}

func TestStatsText(t *testing.T) {
	st := service.Stats{Memories: 204, ByStatus: map[string]int{"live": 198, "superseded": 6}, LiveByScope: map[string]int{"shared": 150, "user": 48}, Episodes: 31, ColdEpisodes: 12}
	if got, want := statsText(st), "204 memories (198 live, 6 superseded; live: 150 shared, 48 about users), 31 episodes (+12 archived)"; got != want {
		t.Fatalf("statsText = %q, want %q", got, want)
	}
}
