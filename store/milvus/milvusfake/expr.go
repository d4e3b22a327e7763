package milvusfake

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// row is one stored entity: field name to value. Values are string, int64,
// float64, bool, []float32 (float vectors), sparseRow (sparse float
// vectors), []string or []int64 (arrays).
type row map[string]any

// expr is a parsed, type-checked boolean expression.
type expr interface {
	match(r row) bool
}

type andExpr struct{ l, r expr }
type orExpr struct{ l, r expr }
type notExpr struct{ x expr }

func (e andExpr) match(r row) bool { return e.l.match(r) && e.r.match(r) }
func (e orExpr) match(r row) bool  { return e.l.match(r) || e.r.match(r) }
func (e notExpr) match(r row) bool { return !e.x.match(r) }

// literal is a constant of the expression: a string, an integer, a float
// or a bool.
type literal struct {
	kind byte // 's', 'i', 'f', 'b'
	s    string
	i    int64
	f    float64
	b    bool
}

func (l literal) String() string {
	switch l.kind {
	case 's':
		return strconv.Quote(l.s)
	case 'i':
		return strconv.FormatInt(l.i, 10)
	case 'f':
		return strconv.FormatFloat(l.f, 'g', -1, 64)
	}
	return strconv.FormatBool(l.b)
}

// compare orders a stored scalar against a literal of a compatible type;
// parse has checked the types.
func compare(v any, l literal) int {
	switch v := v.(type) {
	case string:
		return strings.Compare(v, l.s)
	case int64:
		if l.kind == 'f' {
			return cmpFloat(float64(v), l.f)
		}
		return cmpFloat(float64(v), float64(l.i))
	case float64:
		if l.kind == 'i' {
			return cmpFloat(v, float64(l.i))
		}
		return cmpFloat(v, l.f)
	case bool:
		if v == l.b {
			return 0
		}
		return 1
	}
	return 1
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

type cmpExpr struct {
	field string
	op    string
	lit   literal
}

func (e cmpExpr) match(r row) bool {
	c := compare(r[e.field], e.lit)
	switch e.op {
	case "==":
		return c == 0
	case "!=":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

type inExpr struct {
	field string
	not   bool
	lits  []literal
	// strs holds the literals when all are strings: a long list of keys
	// is looked up, not scanned.
	strs map[string]bool
}

func (e inExpr) match(r row) bool {
	v := r[e.field]
	if s, ok := v.(string); ok && e.strs != nil {
		return e.strs[s] != e.not
	}
	in := slices.ContainsFunc(e.lits, func(l literal) bool { return compare(v, l) == 0 })
	return in != e.not
}

type arrayExpr struct {
	fn    string // array_contains, array_contains_any, array_contains_all
	field string
	lits  []literal
}

func (e arrayExpr) match(r row) bool {
	var elems []any
	switch a := r[e.field].(type) {
	case []string:
		for _, s := range a {
			elems = append(elems, s)
		}
	case []int64:
		for _, i := range a {
			elems = append(elems, i)
		}
	}
	has := func(l literal) bool {
		return slices.ContainsFunc(elems, func(v any) bool { return compare(v, l) == 0 })
	}
	if e.fn == "array_contains_all" {
		return !slices.ContainsFunc(e.lits, func(l literal) bool { return !has(l) })
	}
	return slices.ContainsFunc(e.lits, has)
}

// parseError is how Milvus 2.4 words an expression it cannot parse.
func parseError(text, format string, args ...any) error {
	return fmt.Errorf("cannot parse expression: %s, error: %s", text, fmt.Sprintf(format, args...))
}

// parseExpr parses and type-checks text against the fields of a schema.
func parseExpr(text string, fields map[string]*schemapb.FieldSchema) (expr, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, parseError(text, "%v", err)
	}
	p := &parser{text: text, toks: toks, fields: fields}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, parseError(text, "extraneous input %q", t.text)
	}
	return e, nil
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokString
	tokNumber
	tokOp // == != < <= > >= && || !
	tokPunct
)

type token struct {
	kind tokKind
	text string
	lit  literal
}

func lex(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated string starting at %d", i)
			}
			raw := s[i : j+1]
			if c == '\'' {
				// Milvus turns a single-quoted literal into a double-quoted one.
				raw = `"` + strings.ReplaceAll(strings.ReplaceAll(raw[1:len(raw)-1], `\'`, `'`), `"`, `\"`) + `"`
			}
			v, err := strconv.Unquote(raw)
			if err != nil {
				return nil, fmt.Errorf("bad string literal %s", s[i:j+1])
			}
			toks = append(toks, token{kind: tokString, text: s[i : j+1], lit: literal{kind: 's', s: v}})
			i = j + 1
		case c == '-' || c == '+' || c >= '0' && c <= '9' || c == '.':
			j := i + 1
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == 'e' || s[j] == 'E' ||
				(s[j] == '-' || s[j] == '+') && (s[j-1] == 'e' || s[j-1] == 'E')) {
				j++
			}
			text := s[i:j]
			if n, err := strconv.ParseInt(text, 10, 64); err == nil {
				toks = append(toks, token{kind: tokNumber, text: text, lit: literal{kind: 'i', i: n}})
			} else if f, err := strconv.ParseFloat(text, 64); err == nil {
				toks = append(toks, token{kind: tokNumber, text: text, lit: literal{kind: 'f', f: f}})
			} else {
				return nil, fmt.Errorf("bad number %q", text)
			}
			i = j
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			toks = append(toks, token{kind: tokIdent, text: s[i:j]})
			i = j
		default:
			two := ""
			if i+1 < len(s) {
				two = s[i : i+2]
			}
			switch {
			case slices.Contains([]string{"==", "!=", "<=", ">=", "&&", "||"}, two):
				toks = append(toks, token{kind: tokOp, text: two})
				i += 2
			case c == '<' || c == '>' || c == '!':
				toks = append(toks, token{kind: tokOp, text: string(c)})
				i++
			case c == '(' || c == ')' || c == '[' || c == ']' || c == ',':
				toks = append(toks, token{kind: tokPunct, text: string(c)})
				i++
			default:
				return nil, fmt.Errorf("token recognition error at: '%c'", c)
			}
		}
	}
	return append(toks, token{kind: tokEOF, text: "<EOF>"}), nil
}

type parser struct {
	text   string
	toks   []token
	pos    int
	fields map[string]*schemapb.FieldSchema
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

// keyword reports whether the next token is the word w, in any case.
func (p *parser) keyword(w string) bool {
	t := p.peek()
	return t.kind == tokIdent && strings.EqualFold(t.text, w)
}

func (p *parser) punct(s string) error {
	if t := p.next(); t.kind != tokPunct || t.text != s {
		return parseError(p.text, "missing '%s' at %q", s, t.text)
	}
	return nil
}

func (p *parser) or() (expr, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.peek().text == "||" || p.keyword("or") {
		p.next()
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = orExpr{l, r}
	}
	return l, nil
}

func (p *parser) and() (expr, error) {
	l, err := p.not()
	if err != nil {
		return nil, err
	}
	for p.peek().text == "&&" || p.keyword("and") {
		p.next()
		r, err := p.not()
		if err != nil {
			return nil, err
		}
		l = andExpr{l, r}
	}
	return l, nil
}

func (p *parser) not() (expr, error) {
	if p.peek().text == "!" || p.keyword("not") {
		p.next()
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		return notExpr{x}, nil
	}
	return p.primary()
}

func (p *parser) primary() (expr, error) {
	t := p.next()
	if t.kind == tokPunct && t.text == "(" {
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		return e, p.punct(")")
	}
	if t.kind != tokIdent {
		return nil, parseError(p.text, "mismatched input %q: an expression starts with a field name", t.text)
	}
	switch fn := strings.ToLower(t.text); fn {
	case "array_contains", "array_contains_any", "array_contains_all":
		return p.arrayCall(fn)
	}
	f, err := p.field(t.text)
	if err != nil {
		return nil, err
	}
	if p.keyword("not") || p.keyword("in") {
		not := p.keyword("not")
		if not {
			p.next()
			if !p.keyword("in") {
				return nil, parseError(p.text, "missing 'in' after 'not' at %q", p.peek().text)
			}
		}
		p.next()
		lits, err := p.list(f.GetDataType())
		if err != nil {
			return nil, err
		}
		in := inExpr{field: f.GetName(), not: not, lits: lits}
		if len(lits) > 0 && !slices.ContainsFunc(lits, func(l literal) bool { return l.kind != 's' }) {
			in.strs = make(map[string]bool, len(lits))
			for _, l := range lits {
				in.strs[l.s] = true
			}
		}
		return in, nil
	}
	op := p.next()
	if op.kind != tokOp || op.text == "&&" || op.text == "||" || op.text == "!" {
		return nil, parseError(p.text, "mismatched input %q: expecting a comparison after field %s", op.text, f.GetName())
	}
	lit, err := p.literal(f.GetDataType())
	if err != nil {
		return nil, err
	}
	if f.GetDataType() == schemapb.DataType_Bool && op.text != "==" && op.text != "!=" {
		return nil, parseError(p.text, "bool field %s can only be compared with == or !=", f.GetName())
	}
	return cmpExpr{field: f.GetName(), op: op.text, lit: lit}, nil
}

func (p *parser) arrayCall(fn string) (expr, error) {
	if err := p.punct("("); err != nil {
		return nil, err
	}
	t := p.next()
	if t.kind != tokIdent {
		return nil, parseError(p.text, "%s expects a field name, got %q", fn, t.text)
	}
	f, err := p.field(t.text)
	if err != nil {
		return nil, err
	}
	if f.GetDataType() != schemapb.DataType_Array {
		return nil, parseError(p.text, "%s operation are only supported on array fields now, got: %s", fn, f.GetDataType())
	}
	if err := p.punct(","); err != nil {
		return nil, err
	}
	var lits []literal
	if fn == "array_contains" {
		l, err := p.literal(f.GetElementType())
		if err != nil {
			return nil, err
		}
		lits = []literal{l}
	} else if lits, err = p.list(f.GetElementType()); err != nil {
		return nil, err
	}
	return arrayExpr{fn: fn, field: f.GetName(), lits: lits}, p.punct(")")
}

func (p *parser) field(name string) (*schemapb.FieldSchema, error) {
	f, ok := p.fields[name]
	if !ok {
		return nil, parseError(p.text, "field %s not exist", name)
	}
	switch f.GetDataType() {
	case schemapb.DataType_FloatVector, schemapb.DataType_BinaryVector, schemapb.DataType_Float16Vector,
		schemapb.DataType_BFloat16Vector, schemapb.DataType_SparseFloatVector, schemapb.DataType_JSON:
		return nil, parseError(p.text, "filtering on field %s of type %s is not supported by the fake", name, f.GetDataType())
	}
	return f, nil
}

func (p *parser) list(t schemapb.DataType) ([]literal, error) {
	if err := p.punct("["); err != nil {
		return nil, err
	}
	var lits []literal
	for p.peek().text != "]" {
		if len(lits) > 0 {
			if err := p.punct(","); err != nil {
				return nil, err
			}
		}
		l, err := p.literal(t)
		if err != nil {
			return nil, err
		}
		lits = append(lits, l)
	}
	p.next()
	return lits, nil
}

// literal reads a literal that can be compared with a value of type t.
func (p *parser) literal(t schemapb.DataType) (literal, error) {
	tok := p.next()
	var l literal
	switch {
	case tok.kind == tokString || tok.kind == tokNumber:
		l = tok.lit
	case tok.kind == tokIdent && strings.EqualFold(tok.text, "true"):
		l = literal{kind: 'b', b: true}
	case tok.kind == tokIdent && strings.EqualFold(tok.text, "false"):
		l = literal{kind: 'b', b: false}
	default:
		return l, parseError(p.text, "mismatched input %q: expecting a literal", tok.text)
	}
	ok := false
	switch t {
	case schemapb.DataType_VarChar, schemapb.DataType_String:
		ok = l.kind == 's'
	case schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32, schemapb.DataType_Int64:
		ok = l.kind == 'i'
	case schemapb.DataType_Float, schemapb.DataType_Double:
		ok = l.kind == 'i' || l.kind == 'f'
	case schemapb.DataType_Bool:
		ok = l.kind == 'b'
	}
	if !ok {
		return l, parseError(p.text, "comparisons between %s and %s are not supported", t, l)
	}
	return l, nil
}
