package mcpserver

import (
	"encoding/json"
	"testing"
)

// TestSchemasArePortable lists the tools as a client sees them and checks
// what the inspector's --strict mode and strict model providers refuse: a
// type given as a list, and a property without any validation keyword.
func TestSchemasArePortable(t *testing.T) {
	s := New(nil, Options{})
	res := s.HandleMessage(t.Context(), json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Result struct {
			Tools []map[string]any `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &list); err != nil || len(list.Result.Tools) == 0 {
		t.Fatalf("tools/list: %v %s", err, raw)
	}
	keywords := []string{"type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "not"}
	var walk func(tool, path string, v any)
	walk = func(tool, path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if ts, ok := x["type"].([]any); ok {
				t.Errorf("%s %s: type is a list %v", tool, path, ts)
			}
			if props, ok := x["properties"].(map[string]any); ok {
				for name, p := range props {
					pm, _ := p.(map[string]any)
					has := false
					for _, k := range keywords {
						if _, ok := pm[k]; ok {
							has = true
						}
					}
					if !has {
						t.Errorf("%s %s.%s: no validation keyword", tool, path, name)
					}
					walk(tool, path+"."+name, p)
				}
			}
			for k, sub := range x {
				if k != "properties" {
					walk(tool, path+"/"+k, sub)
				}
			}
		case []any:
			for _, sub := range x {
				walk(tool, path+"[]", sub)
			}
		}
	}
	for _, tool := range list.Result.Tools {
		walk(tool["name"].(string), "", tool)
	}
}

// TestStructuredOutputHasNoNullForArrays: what the output schema calls an
// array is never sent as null.
func TestStructuredOutputHasNoNullForArrays(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"results": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{
			"flags": map[string]any{"type": "array"},
		}}},
		"meta": map[string]any{"type": "object"},
		"note": map[string]any{"type": "string"},
	}}
	got, err := structured(struct {
		Results []struct {
			Flags []string `json:"flags"`
		} `json:"results"`
		Meta map[string]int `json:"meta"`
		Note *string        `json:"note"`
	}{Results: make([]struct {
		Flags []string `json:"flags"`
	}, 1)}, schema)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(got)
	if want := `{"meta":{},"note":null,"results":[{"flags":[]}]}`; string(raw) != want {
		t.Fatalf("structured = %s, want %s", raw, want)
	}
}
