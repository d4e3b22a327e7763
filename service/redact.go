package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/redact"
)

// redactionKeySetting holds the deployment's redaction key when none is
// configured, so that every process hashes a secret the same way.
const redactionKeySetting = "redaction.key"

// redactor returns the redactor every text passes through before it is
// stored: the configured one, or one keyed with the deployment's key (made
// on first use and kept in the store's settings) and the default policy.
func (s *Service) redactor(ctx context.Context) (*redact.Redactor, error) {
	s.redactOnce.Lock()
	defer s.redactOnce.Unlock()
	if s.red != nil {
		return s.red, nil
	}
	if s.cfg.Redactor != nil {
		s.red = s.cfg.Redactor
		return s.red, nil
	}
	key, err := s.store.Setting(ctx, redactionKeySetting)
	if err != nil {
		return nil, fmt.Errorf("read the redaction key: %w", err)
	}
	if key == "" {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		if err := s.store.PutSetting(ctx, redactionKeySetting, hex.EncodeToString(b)); err != nil {
			return nil, fmt.Errorf("store the redaction key: %w", err)
		}
		// Another process may have raced us: use whatever was kept.
		if key, err = s.store.Setting(ctx, redactionKeySetting); err != nil {
			return nil, err
		}
	}
	s.red = redact.New([]byte(key), s.cfg.Policy)
	return s.red, nil
}

// redactEvents replaces secrets and treats personal data in every text
// field of events.
func redactEvents(r *redact.Redactor, es []memory.Event) {
	for i := range es {
		e := &es[i]
		e.Content, e.ToolArgs, e.ToolResult, e.Error = r.String(e.Content), r.String(e.ToolArgs), r.String(e.ToolResult), r.String(e.Error)
	}
}

func redactAll(r *redact.Redactor, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = r.String(s)
	}
	return out
}
