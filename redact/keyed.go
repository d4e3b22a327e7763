package redact

import (
	"context"
	"sync"

	"github.com/hindsight-memory/hindsight/memory"
)

// Settings is where a deployment keeps its redaction key when none is
// configured: the episodic store's settings, which every process reads.
type Settings = memory.Settings

// KeySetting names the deployment's redaction key in Settings.
const KeySetting = "redaction.key"

// FromSettings returns a redactor keyed with the deployment's key, making
// one (32 random bytes) on first use, so that every process hashes a
// secret the same way.
func FromSettings(ctx context.Context, s Settings, policy Policy) (*Redactor, error) {
	key, err := memory.DeploymentSecret(ctx, s, KeySetting)
	if err != nil {
		return nil, err
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
