package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
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
