package keys

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// Key names one of the deployment's keys.
type Key struct {
	// Env is the environment variable that sets it in production.
	Env string
	// File is its file in the data directory's key folder.
	File string
	// Setting is the settings row earlier versions kept it in.
	Setting string
	// What it is for, in the words of an error message.
	What string
}

// The deployment's keys.
var (
	Console = Key{Env: "HINDSIGHT_CONSOLE_KEY", File: "console.key", Setting: "console.session.key",
		What: "signs the memory console's sign-in cookies and CSRF tokens"}
	Redaction = Key{Env: "HINDSIGHT_REDACTION_KEY", File: "redaction.key", Setting: "redaction.key",
		What: "keys the hash in secret placeholders and marks the placeholders as Hindsight's own"}
	Session = Key{Env: "HINDSIGHT_SESSION_KEY", File: "mcp-session.key", Setting: "mcp.session.key",
		What: "signs the MCP session IDs hindsight dev issues"}
)

// All lists every key.
var All = []Key{Console, Redaction, Session}

// MinLength is the shortest key accepted from the environment, in
// characters.
const MinLength = 16

// Store is where earlier versions kept the keys: the episodic store's
// settings.
type Store interface {
	// Setting returns a setting's value, "" when unset.
	Setting(ctx context.Context, key string) (string, error)
	// DeleteSetting removes a setting for good: no query reads it after.
	DeleteSetting(ctx context.Context, key string) error
}

// Config says where the keys are.
type Config struct {
	// Dir is the folder of the key files (the data directory's "keys"),
	// when the stores are embedded; a missing key is made there. Empty in
	// production, where every key must come from the environment.
	Dir string
	// Env reads the environment (cmd passes os.Getenv); nil reads none.
	Env func(string) string
	// Ephemeral makes a missing key at random for this process alone,
	// kept nowhere: for an in-memory store, whose data dies with the
	// process too. Never set it for a store that outlives the process.
	Ephemeral bool
	Logger    *slog.Logger
}

// Set is the keys a process was opened with.
type Set struct {
	keys map[string][]byte
}

// Get returns k's key; Open must have been asked for it.
func (s *Set) Get(k Key) []byte {
	if s == nil {
		return nil
	}
	return s.keys[k.Env]
}

// MissingError says a production process was started without a key.
type MissingError struct {
	Key Key
	// InStore says the store still holds the key from before keys moved
	// out of it: the operator should set that one (hindsight keys
	// export prints it), so that nothing signed with it stops verifying.
	InStore bool
}

func (e *MissingError) Error() string {
	msg := fmt.Sprintf("%s is not set: it %s, and must be the same in every process (from the Kubernetes Secret or .env)", e.Key.Env, e.Key.What)
	if e.InStore {
		return msg + "; the store still holds the key an earlier version made: run `hindsight keys export` where the store is reachable, set what it prints, and start again (the key then leaves the store)"
	}
	return msg + "; make one with `openssl rand -hex 32`"
}

// Open returns the keys named, from the environment, else (with
// Config.Dir) from their files, made at random when missing. A key still
// in the store's settings is moved out first: with Dir it becomes the key
// file (unless one exists) and its row is deleted; in production the row
// is deleted once the environment sets the key, and until then Open fails
// with a MissingError that says so. store may be nil (nothing to move).
func Open(ctx context.Context, cfg Config, store Store, names ...Key) (*Set, error) {
	env := cfg.Env
	if env == nil {
		env = func(string) string { return "" }
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Set{keys: map[string][]byte{}}
	for _, k := range names {
		v, err := open(ctx, cfg, env, log, store, k)
		if err != nil {
			return nil, err
		}
		s.keys[k.Env] = []byte(v)
	}
	return s, nil
}

func open(ctx context.Context, cfg Config, env func(string) string, log *slog.Logger, store Store, k Key) (string, error) {
	legacy := ""
	if store != nil {
		v, err := store.Setting(ctx, k.Setting)
		if err != nil {
			return "", fmt.Errorf("keys: read %s from the store's settings: %w", k.Setting, err)
		}
		legacy = v
	}
	if v := strings.TrimSpace(env(k.Env)); v != "" {
		if len(v) < MinLength {
			return "", fmt.Errorf("%s is %d characters; use at least %d random ones (openssl rand -hex 32)", k.Env, len(v), MinLength)
		}
		if legacy != "" {
			if legacy != v {
				log.Warn("keys: the store held another key than the environment sets; the environment's is used, and what the store's signed or hashed verifies no more (console sign-ins ask again, old placeholders are hashed anew)", "key", k.Env)
			}
			if err := forget(ctx, store, k); err != nil {
				return "", err
			}
		}
		return v, nil
	}
	if cfg.Dir == "" {
		if cfg.Ephemeral && legacy == "" {
			return random()
		}
		return "", &MissingError{Key: k, InStore: legacy != ""}
	}
	v, err := fromFile(filepath.Join(cfg.Dir, k.File), legacy)
	if err != nil {
		return "", err
	}
	if legacy != "" {
		if legacy != v {
			log.Warn("keys: the store held another key than the key file; the file's is used", "key", k.Env, "file", filepath.Join(cfg.Dir, k.File))
		} else {
			log.Info("keys: moved a key out of the store's settings into its key file", "key", k.Env, "file", filepath.Join(cfg.Dir, k.File))
		}
		if err := forget(ctx, store, k); err != nil {
			return "", err
		}
	}
	return v, nil
}

// forget deletes k's row from the store's settings.
func forget(ctx context.Context, store Store, k Key) error {
	if err := store.DeleteSetting(ctx, k.Setting); err != nil {
		return fmt.Errorf("keys: delete %s from the store's settings: %w", k.Setting, err)
	}
	return nil
}

// fromFile reads the key file at path, creating it when missing with
// initial (or, when initial is "", a random key). Of processes creating it
// at once exactly one wins: each writes its own temporary file and links
// it to path, which fails when path exists; the others read the winner's.
func fromFile(path, initial string) (string, error) {
	if v, err := readKey(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return v, err
	}
	v := initial
	if v == "" {
		var err error
		if v, err = random(); err != nil {
			return "", err
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("keys: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return "", fmt.Errorf("keys: %w", err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600.
	if _, err := tmp.WriteString(v + "\n"); err != nil {
		tmp.Close()
		return "", fmt.Errorf("keys: write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", fmt.Errorf("keys: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("keys: write %s: %w", path, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readKey(path)
		}
		return "", fmt.Errorf("keys: create %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return v, nil
}

// readKey reads a key file, refusing one too short to be a key.
func readKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	v := strings.TrimSpace(string(b))
	if len(v) < MinLength {
		return "", fmt.Errorf("keys: %s holds %d characters, not a key: delete it to make a new one (what it signed stops verifying) or restore it", path, len(v))
	}
	return v, nil
}

// random is a new key: 32 random bytes in hex, as earlier versions made.
func random() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// Export returns, for each of names the store still holds, the line to
// set in the environment (NAME=value), for an operator moving keys out of
// a production store (`hindsight keys export`).
func Export(ctx context.Context, store Store, names ...Key) ([]string, error) {
	var out []string
	for _, k := range names {
		v, err := store.Setting(ctx, k.Setting)
		if err != nil {
			return nil, fmt.Errorf("keys: read %s from the store's settings: %w", k.Setting, err)
		}
		if v != "" {
			out = append(out, k.Env+"="+v)
		}
	}
	return out, nil
}
