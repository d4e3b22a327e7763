package service

import (
	"context"
	"slices"

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

func redactAll(r *redact.Redactor, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = r.String(s)
	}
	return out
}
