package memory

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Match reports whether d passes f. It is the reference semantics of
// VectorFilter: every VectorIndex (the local index, the Milvus expression
// builder) must select exactly the documents Match selects.
func (f VectorFilter) Match(d VectorDoc) bool {
	if d.Tenant != f.Tenant {
		return false
	}
	if !InScopes(d.Scope, f.Scopes) {
		return false
	}
	if len(f.Kinds) > 0 && !slices.Contains(f.Kinds, d.Kind) {
		return false
	}
	if f.TaskType != "" && d.TaskType != f.TaskType {
		return false
	}
	if len(f.Statuses) > 0 && !slices.Contains(f.Statuses, d.Status) {
		return false
	}
	if f.MinConfidence > 0 && d.Confidence < f.MinConfidence {
		return false
	}
	if len(f.Entities) > 0 && !slices.ContainsFunc(f.Entities, func(e string) bool { return slices.Contains(d.Entities, e) }) {
		return false
	}
	if !f.CreatedAfter.IsZero() && d.CreatedAt.Before(f.CreatedAfter) {
		return false
	}
	if !f.CreatedBefore.IsZero() && !d.CreatedAt.Before(f.CreatedBefore) {
		return false
	}
	return true
}

// Seconds is a creation range in whole Unix seconds (time.Time.Unix).
type Seconds struct{ From, To int64 }

// Seconds widens f's creation range to whole seconds, for indexes that
// keep creation times as seconds in a dense column: a memory whose
// creation second Holds rejects is outside f's range, and one Inside
// accepts is in it; the seconds at the bounds need Match. Without a range
// it holds every second.
func (f VectorFilter) Seconds() Seconds {
	s := Seconds{math.MinInt64, math.MaxInt64}
	if !f.CreatedAfter.IsZero() {
		s.From = f.CreatedAfter.Unix()
	}
	if !f.CreatedBefore.IsZero() {
		s.To = f.CreatedBefore.Unix()
	}
	return s
}

// Holds reports whether a memory created in that second may lie in the
// range: when it does not, Match rejects the memory.
func (s Seconds) Holds(unix int64) bool { return unix >= s.From && unix <= s.To }

// Inside reports whether every instant of that second lies in the range:
// when it does, Match accepts the memory's creation time without a look
// at its fractions.
func (s Seconds) Inside(unix int64) bool { return unix > s.From && unix < s.To }

// Bounded reports whether the range excludes any second.
func (s Seconds) Bounded() bool { return s.From != math.MinInt64 || s.To != math.MaxInt64 }

// Validate checks that f names a valid tenant.
func (f VectorFilter) Validate(op string) error {
	return ValidateTenant(op, f.Tenant)
}

// NormalizeEntity folds an entity name for storage and matching.
func NormalizeEntity(e string) string {
	return Normalize(strings.TrimSpace(e))
}

// NormalizeEntities normalises entities, drops empties and deduplicates.
func NormalizeEntities(es []string) []string {
	if len(es) == 0 {
		return nil
	}
	out := make([]string, 0, len(es))
	for _, e := range es {
		if n := NormalizeEntity(e); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// CompareUpdated is the order MemoryStore.Memories returns memories in:
// by UpdatedAt, then by ID.
func CompareUpdated(a, b Memory) int {
	return cmp.Or(a.UpdatedAt.Compare(b.UpdatedAt), cmp.Compare(a.ID, b.ID))
}

// VectorDocOf returns the vector document of a memory version, its
// entities normalised (NormalizeEntities) as every index stores and
// filters them.
func VectorDocOf(m Memory, vector []float32) VectorDoc {
	return VectorDoc{
		ID:          m.ID,
		Tenant:      m.Tenant,
		Vector:      vector,
		Scope:       m.Scope.Norm(),
		Kind:        m.Kind,
		TaskType:    m.TaskType,
		Status:      string(m.Status),
		Confidence:  m.Confidence,
		Decay:       m.Decay,
		CreatedAt:   m.CreatedAt,
		UpdatedAt:   m.UpdatedAt,
		RecallCount: m.RecallCount,
		Pinned:      m.Pinned,
		Entities:    NormalizeEntities(m.Entities),
	}
}

// EpisodeVectorDoc returns the vector document of an episode.
func EpisodeVectorDoc(ep Episode, vector []float32) VectorDoc {
	return VectorDoc{
		ID:        ep.ID,
		Tenant:    ep.Tenant,
		Vector:    vector,
		TaskType:  ep.TaskType,
		Status:    string(ep.Status),
		CreatedAt: ep.EndedAt,
		UpdatedAt: ep.CreatedAt,
		Entities:  ep.Entities,
	}
}

// Cosine returns the cosine similarity of a and b; 0 if either is zero or
// their lengths differ.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// EmbedText is the text a memory is embedded from.
func EmbedText(m Memory) string {
	if m.CounterExample == "" {
		return m.Content
	}
	return m.Content + "\n" + m.CounterExample
}

// IndexText is what keyword search matches a memory on: the text it is
// embedded from plus its entities and task type.
func IndexText(m Memory) string {
	var b strings.Builder
	b.WriteString(EmbedText(m))
	for _, e := range m.Entities {
		b.WriteString("\n")
		b.WriteString(e)
	}
	if m.TaskType != "" {
		b.WriteString("\n")
		b.WriteString(m.TaskType)
	}
	return b.String()
}

// EpisodeEmbedText is the text an episode is embedded from: its task and
// key steps.
func EpisodeEmbedText(ep Episode) string {
	var b strings.Builder
	b.WriteString(ep.Task)
	for _, s := range ep.Steps {
		b.WriteString("\n")
		b.WriteString(s)
	}
	return b.String()
}
