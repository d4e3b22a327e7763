package service

import (
	"context"
	"slices"

	"github.com/hindsight-memory/hindsight/redact"
)

// redactor returns the redactor every text passes through before it is
// stored: the configured one, or one keyed with the deployment's key (made
// on first use and kept in the store's settings) and the configured policy.
func (s *Service) redactor(ctx context.Context) (*redact.Redactor, error) {
	return s.red.Get(ctx, s.cfg.Redactor, s.store, s.cfg.Policy)
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
