package service

import (
	"context"
	"slices"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/redact"
)

// redactor returns the redactor every text passes through before it is
// stored: the configured one (keyed with the deployment's redaction key),
// or, for tests, one keyed for this process alone.
func (s *Service) redactor(context.Context) (*redact.Redactor, error) {
	return redact.Or(s.cfg.Redactor, s.cfg.Policy), nil
}

// keepsRawEvents reports whether tenant keeps its raw events unredacted.
func (s *Service) keepsRawEvents(tenant string) bool {
	return slices.Contains(s.cfg.KeepRawEvents, tenant)
}

// redactAll redacts each of ss, into a new slice.
func redactAll(r *redact.Redactor, ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = r.String(s)
	}
	return out
}

// Identifiers and names a caller chooses (session, user and agent IDs,
// the project, the task type) are redacted like any text: they are stored
// and sent to Temporal as they come, and a secret pasted into one would
// otherwise go with them. Redaction is deterministic, so an identifier
// redacts alike in every call and lookups find what was stored under it.

// redactQuery redacts what a recall query says before the embedder, the
// query model or the store sees it.
func redactQuery(r *redact.Redactor, q memory.Query) memory.Query {
	q.Text, q.TaskType, q.Project = r.String(q.Text), r.String(q.TaskType), r.String(q.Project)
	q.UserID, q.AgentID = r.String(q.UserID), r.String(q.AgentID)
	q.Entities = redactAll(r, q.Entities)
	return q
}
