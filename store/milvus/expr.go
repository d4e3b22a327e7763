package milvus

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	schema "github.com/hindsight-memory/hindsight/schema/milvus"
)

// selection is everything one Milvus expression can restrict: a filter
// (whose tenant is required and always applied), optionally a set of
// documents by ID, and optionally a paging cursor.
type selection struct {
	filter memory.VectorFilter
	// ids, when non-nil, keeps only these documents of the tenant. An empty,
	// non-nil list is an error rather than "everything": a Delete must never
	// widen into the whole tenant.
	ids []string
	// afterID keeps only documents whose ID sorts after it.
	afterID string
}

// buildExpr returns the Milvus boolean expression that selects exactly the
// documents s selects: those memory.VectorFilter.Match accepts, restricted
// to ids and to IDs after afterID. It is the only place the adapter builds
// expressions. Field names are constants of the schema; every string value
// goes through quote, numbers are formatted from typed values, and nothing
// from the caller is concatenated raw, so a value such as
// `x" || tenant != "` stays one string literal.
func buildExpr(s selection) (string, error) {
	f := s.filter
	if err := memory.ValidateTenant("milvus: filter", f.Tenant); err != nil {
		return "", err
	}
	terms := []string{schema.FieldTenant + " == " + quote(f.Tenant)}
	if len(f.Scopes) > 0 {
		scopes := make([]string, len(f.Scopes))
		for i, sc := range f.Scopes {
			scopes[i] = string(sc.Norm())
		}
		terms = append(terms, schema.FieldScope+" in "+quoteList(scopes))
	}
	if len(f.Kinds) > 0 {
		kinds := make([]string, len(f.Kinds))
		for i, k := range f.Kinds {
			kinds[i] = string(k)
		}
		terms = append(terms, schema.FieldKind+" in "+quoteList(kinds))
	}
	if f.TaskType != "" {
		terms = append(terms, schema.FieldTaskType+" == "+quote(f.TaskType))
	}
	if len(f.Statuses) > 0 {
		terms = append(terms, schema.FieldStatus+" in "+quoteList(f.Statuses))
	}
	if f.MinConfidence > 0 {
		if math.IsInf(f.MinConfidence, 0) || math.IsNaN(f.MinConfidence) {
			return "", memory.Invalidf("milvus: filter", "min confidence %v is not a finite number", f.MinConfidence)
		}
		terms = append(terms, schema.FieldConfidence+" >= "+strconv.FormatFloat(f.MinConfidence, 'f', -1, 64))
	}
	if len(f.Entities) > 0 {
		terms = append(terms, "array_contains_any("+schema.FieldEntities+", "+quoteList(f.Entities)+")")
	}
	// Times are stored as whole milliseconds (floor). A stored instant t
	// passes "t >= after" exactly when its milliseconds reach after rounded
	// up, and likewise for "t < before".
	if !f.CreatedAfter.IsZero() {
		terms = append(terms, schema.FieldCreatedAt+" >= "+strconv.FormatInt(ceilMilli(f.CreatedAfter), 10))
	}
	if !f.CreatedBefore.IsZero() {
		terms = append(terms, schema.FieldCreatedAt+" < "+strconv.FormatInt(ceilMilli(f.CreatedBefore), 10))
	}
	if s.ids != nil {
		if len(s.ids) == 0 {
			return "", errors.New("milvus: filter: an empty ID list selects nothing; skip the call instead")
		}
		pks := make([]string, len(s.ids))
		for i, id := range s.ids {
			pks[i] = schema.PrimaryKey(f.Tenant, id)
		}
		terms = append(terms, schema.FieldPK+" in "+quoteList(pks))
	}
	if s.afterID != "" {
		terms = append(terms, schema.FieldPK+" > "+quote(schema.PrimaryKey(f.Tenant, s.afterID)))
	}
	return strings.Join(terms, " && "), nil
}

// quote returns s as a Milvus string literal. Milvus unquotes
// double-quoted literals with Go's strconv.Unquote, so Go quoting is exact:
// quotes and backslashes are escaped, control and invalid bytes become
// \x, \u or \U escapes, and the value can never end the literal early.
func quote(s string) string { return strconv.Quote(s) }

func quoteList(values []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(v))
	}
	b.WriteByte(']')
	return b.String()
}

// toMilli is how times are stored: Unix milliseconds, rounded down.
func toMilli(t time.Time) int64 { return t.UnixMilli() }

// fromMilli is the inverse of toMilli, in UTC.
func fromMilli(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// ceilMilli rounds t up to whole milliseconds.
func ceilMilli(t time.Time) int64 {
	ms := t.UnixMilli()
	if t.After(time.UnixMilli(ms)) {
		ms++
	}
	return ms
}

// validateLimits checks the documents against the field limits of the
// schema, so that the caller learns which document and field is too long
// instead of a bare Milvus error.
func validateLimits(op string, docs []memory.VectorDoc) error {
	check := func(id, field, v string, max int) error {
		if len(v) > max {
			return memory.Invalidf(op, "document %s: %s is %d bytes long, the Milvus schema allows %d", id, field, len(v), max)
		}
		return nil
	}
	for _, d := range docs {
		if err := check(d.ID, "id", d.ID, schema.MaxIDLength); err != nil {
			return err
		}
		if err := check(d.ID, "scope", string(d.Scope.Norm()), schema.MaxScopeLength); err != nil {
			return err
		}
		if err := check(d.ID, "kind", string(d.Kind), schema.MaxKindLength); err != nil {
			return err
		}
		if err := check(d.ID, "task type", d.TaskType, schema.MaxTaskTypeLength); err != nil {
			return err
		}
		if err := check(d.ID, "status", d.Status, schema.MaxStatusLength); err != nil {
			return err
		}
		if len(d.Entities) > schema.MaxEntities {
			return memory.Invalidf(op, "document %s has %d entities, the Milvus schema allows %d", d.ID, len(d.Entities), schema.MaxEntities)
		}
		for _, e := range d.Entities {
			if err := check(d.ID, fmt.Sprintf("entity %q", e), e, schema.MaxEntityLength); err != nil {
				return err
			}
		}
	}
	return nil
}
