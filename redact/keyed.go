package redact

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
)

// Settings is where a deployment keeps its redaction key when none is
// configured: the episodic store's settings, which every process reads.
type Settings interface {
	Setting(ctx context.Context, key string) (string, error)
	PutSetting(ctx context.Context, key, value string) error
}

// KeySetting names the deployment's redaction key in Settings.
const KeySetting = "redaction.key"

// FromSettings returns a redactor keyed with the deployment's key, making
// one (32 random bytes) on first use, so that every process hashes a
// secret the same way.
func FromSettings(ctx context.Context, s Settings, policy Policy) (*Redactor, error) {
	key, err := s.Setting(ctx, KeySetting)
	if err != nil {
		return nil, fmt.Errorf("read the redaction key: %w", err)
	}
	if key == "" {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		if err := s.PutSetting(ctx, KeySetting, hex.EncodeToString(b)); err != nil {
			return nil, fmt.Errorf("store the redaction key: %w", err)
		}
		// Another process may have raced this one: use what was kept.
		if key, err = s.Setting(ctx, KeySetting); err != nil {
			return nil, err
		}
	}
	return New([]byte(key), policy), nil
}

// Once holds a process's redactor, made on first use: the configured one
// when there is one, else one keyed with the deployment's key.
type Once struct {
	mu sync.Mutex
	r  *Redactor
}

// Get returns configured if it is set, else the redactor FromSettings
// makes, once.
func (o *Once) Get(ctx context.Context, configured *Redactor, s Settings, policy Policy) (*Redactor, error) {
	if configured != nil {
		return configured, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.r == nil {
		r, err := FromSettings(ctx, s, policy)
		if err != nil {
			return nil, err
		}
		o.r = r
	}
	return o.r, nil
}
