package memory

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// Settings is where a deployment keeps values every process must share,
// such as its keys: the episodic store's settings.
type Settings interface {
	Setting(ctx context.Context, key string) (string, error)
	PutSetting(ctx context.Context, key, value string) error
}

// DeploymentSecret returns the deployment's secret named key (hex), making
// one of 32 random bytes on first use, so that every process and every
// restart uses the same.
func DeploymentSecret(ctx context.Context, s Settings, key string) (string, error) {
	v, err := s.Setting(ctx, key)
	if err != nil {
		return "", fmt.Errorf("read the deployment's %s: %w", key, err)
	}
	if v != "" {
		return v, nil
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	if err := s.PutSetting(ctx, key, hex.EncodeToString(b)); err != nil {
		return "", fmt.Errorf("store the deployment's %s: %w", key, err)
	}
	// Another process may have raced this one: use what was kept.
	if v, err = s.Setting(ctx, key); err != nil {
		return "", fmt.Errorf("read the deployment's %s: %w", key, err)
	}
	return v, nil
}
