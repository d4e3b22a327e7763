package milvusfake

import (
	"strings"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

var exprFields = map[string]*schemapb.FieldSchema{
	"s":    {Name: "s", DataType: schemapb.DataType_VarChar},
	"i":    {Name: "i", DataType: schemapb.DataType_Int64},
	"f":    {Name: "f", DataType: schemapb.DataType_Double},
	"b":    {Name: "b", DataType: schemapb.DataType_Bool},
	"tags": {Name: "tags", DataType: schemapb.DataType_Array, ElementType: schemapb.DataType_VarChar},
	"v": {Name: "v", DataType: schemapb.DataType_FloatVector,
		TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}}},
}

func TestExprMatches(t *testing.T) {
	r := row{"s": `x" || s != "`, "i": int64(5), "f": 0.5, "b": true, "tags": []string{"a", "b"}}
	tests := []struct {
		expr string
		want bool
	}{
		{`s == "x\" || s != \""`, true},
		{`s == 'x" || s != "'`, true},
		{`s == "x"`, false},
		{`s != "x" && i >= 5`, true},
		{`i > 5 || f < 0.6`, true},
		{`i > 5 or (f < 0.6 and b == false)`, false},
		{`not i in [1, 2]`, true},
		{`i not in [5]`, false},
		{`!(b == true)`, false},
		{`f >= 1e-1`, true},
		{`f == 1`, false},
		{`array_contains(tags, "a")`, true},
		{`array_contains_any(tags, ["z", "b"])`, true},
		{`array_contains_all(tags, ["a", "z"])`, false},
		{`s in []`, false},
		{`i <= -1`, false},
	}
	for _, tt := range tests {
		e, err := parseExpr(tt.expr, exprFields)
		if err != nil {
			t.Errorf("parse %s: %v", tt.expr, err)
			continue
		}
		if got := e.match(r); got != tt.want {
			t.Errorf("%s = %t, want %t", tt.expr, got, tt.want)
		}
	}
}

func TestExprRejects(t *testing.T) {
	for _, text := range []string{
		``, `s ==`, `s == "x`, `s == x`, `"x" == s`, `s like "a%"`, `i + 1 > 2`, `i == "5"`, `s == 5`,
		`nope == 1`, `v == 1`, `b > true`, `array_contains(s, "a")`, `(i == 1`, `i == 1)`, `i == 1 &&`,
		`s in ["a", ]`, `s in "a"`, `i == 1 ||| i == 2`, `i == 1; drop`,
	} {
		_, err := parseExpr(text, exprFields)
		if err == nil || !strings.Contains(err.Error(), "cannot parse expression: "+text) {
			t.Errorf("parse %q = %v, want a cannot-parse error", text, err)
		}
	}
}
