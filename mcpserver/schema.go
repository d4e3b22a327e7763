package mcpserver

import (
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
)

// portableOutput rewrites a tool's output schema so that every client can
// read it: a type given as a list (["null","array"], what mcp-go's schema
// reflection says of a Go slice) becomes the one non-null type, which
// strict validators and many model providers require. The values sent
// match it: fillNulls turns a null where the schema says array or object
// into an empty one.
func portableOutput(t *mcp.Tool) (map[string]any, error) {
	if t.OutputSchema.Type == "" {
		return nil, nil
	}
	raw, err := json.Marshal(t.OutputSchema)
	if err != nil {
		return nil, err
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return nil, err
	}
	singleTypes(schema)
	fixed, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	t.OutputSchema = mcp.ToolOutputSchema{}
	t.RawOutputSchema = fixed
	return schema, nil
}

// singleTypes replaces, throughout a schema, every list of types by its
// one non-null member.
func singleTypes(v any) {
	switch x := v.(type) {
	case map[string]any:
		if ts, ok := x["type"].([]any); ok {
			var kept []any
			for _, t := range ts {
				if t != "null" {
					kept = append(kept, t)
				}
			}
			if len(kept) != 1 {
				panic(fmt.Sprintf("mcpserver: schema type %v has no single non-null type", ts))
			}
			x["type"] = kept[0]
		}
		for _, sub := range x {
			singleTypes(sub)
		}
	case []any:
		for _, sub := range x {
			singleTypes(sub)
		}
	}
}

// fillNulls returns v (decoded JSON) with each null that schema types as
// an array or an object replaced by an empty one.
func fillNulls(v any, schema map[string]any) any {
	if schema == nil {
		return v
	}
	typ, _ := schema["type"].(string)
	if v == nil {
		switch typ {
		case "array":
			return []any{}
		case "object":
			return map[string]any{}
		}
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		extra, _ := schema["additionalProperties"].(map[string]any)
		for k, sub := range x {
			ps, _ := props[k].(map[string]any)
			if ps == nil {
				ps = extra
			}
			x[k] = fillNulls(sub, ps)
		}
	case []any:
		items, _ := schema["items"].(map[string]any)
		for i, sub := range x {
			x[i] = fillNulls(sub, items)
		}
	}
	return v
}

// structured is a tool's output as the JSON its output schema describes.
func structured(out any, schema map[string]any) (any, error) {
	if schema == nil {
		return out, nil
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return fillNulls(v, schema), nil
}
