package keys

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hindsight-memory/hindsight/memory"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestKeyFileMadeOnceReadOnly: a missing key is made in its file,
// readable by its owner only, and read back on every later start.
func TestKeyFileMadeOnce(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "keys")
	s, err := Open(ctx, Config{Dir: dir}, nil, All...)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, k := range All {
		v := s.Get(k)
		if len(v) != 64 || seen[string(v)] {
			t.Fatalf("%s = %q: want 64 hex digits, another for each key", k.Env, v)
		}
		seen[string(v)] = true
		fi, err := os.Stat(filepath.Join(dir, k.File))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v, want -rw-------", k.File, fi.Mode().Perm())
		}
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("%s is %v, want drwx------", dir, fi.Mode().Perm())
	}
	again, err := Open(ctx, Config{Dir: dir}, nil, All...)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range All {
		if !bytes.Equal(again.Get(k), s.Get(k)) {
			t.Errorf("%s changed across starts", k.Env)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(All) {
		t.Errorf("the key folder holds %d files, want %d (no temporary file left)", len(entries), len(All))
	}
	// The environment wins over the file.
	e, err := Open(ctx, Config{Dir: dir, Env: env(map[string]string{Console.Env: "an-operators-console-key"})}, nil, Console)
	if err != nil || string(e.Get(Console)) != "an-operators-console-key" {
		t.Fatalf("with %s set: %q, %v", Console.Env, e.Get(Console), err)
	}
	if err := os.WriteFile(filepath.Join(dir, Session.File), []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, Config{Dir: dir}, nil, Session); err == nil || !strings.Contains(err.Error(), "not a key") {
		t.Fatalf("a truncated key file: %v, want an error that says so", err)
	}
}

// TestOneCreatorWins starts many creators of one key at once, goroutines
// and separate processes: every one ends with the same key.
func TestOneCreatorWins(t *testing.T) {
	if dir := os.Getenv("HINDSIGHT_KEYS_TEST_CHILD"); dir != "" {
		s, err := Open(context.Background(), Config{Dir: dir}, nil, Redaction)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Printf("key=%s\n", s.Get(Redaction))
		os.Exit(0)
	}
	dir := filepath.Join(t.TempDir(), "keys")
	var (
		mu  sync.Mutex
		got = map[string]int{}
		wg  sync.WaitGroup
	)
	add := func(v string) {
		mu.Lock()
		got[v]++
		mu.Unlock()
	}
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestOneCreatorWins$")
		cmd.Env = append(os.Environ(), "HINDSIGHT_KEYS_TEST_CHILD="+dir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	for range 16 {
		wg.Go(func() {
			s, err := Open(context.Background(), Config{Dir: dir}, nil, Redaction)
			if err != nil {
				t.Error(err)
				return
			}
			add(string(s.Get(Redaction)))
		})
	}
	wg.Wait()
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("creator process %d: %v\n%s", i, err, outs[i])
		}
		_, v, ok := strings.Cut(strings.TrimSpace(outs[i].String()), "key=")
		if !ok {
			t.Fatalf("creator process %d printed %q", i, outs[i])
		}
		add(strings.Fields(v)[0])
	}
	if len(got) != 1 {
		t.Fatalf("creators ended with %d different keys: %v", len(got), got)
	}
}

// TestKeysLeaveTheStore: a key an earlier version kept in the store's
// settings becomes the key file (so what it signed keeps verifying) and
// its row is deleted; in production the process refuses to start until
// the environment sets it, then deletes the row.
func TestKeysLeaveTheStore(t *testing.T) {
	ctx := context.Background()
	legacy := map[Key]string{}
	fill := func() *memory.MemStore {
		st := memory.NewMemStore()
		for _, k := range All {
			v := fmt.Sprintf("%064x", len(k.Setting)*7919)
			legacy[k] = v
			if err := st.PutSetting(ctx, k.Setting, v); err != nil {
				t.Fatal(err)
			}
		}
		return st
	}
	noRows := func(t *testing.T, st *memory.MemStore, ks ...Key) {
		t.Helper()
		for _, k := range ks {
			if v, _ := st.Setting(ctx, k.Setting); v != "" {
				t.Errorf("the store still holds %s", k.Setting)
			}
		}
	}

	t.Run("embedded", func(t *testing.T) {
		st := fill()
		dir := filepath.Join(t.TempDir(), "keys")
		s, err := Open(ctx, Config{Dir: dir}, st, All...)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range All {
			if string(s.Get(k)) != legacy[k] {
				t.Errorf("%s = %q, want the store's %q", k.Env, s.Get(k), legacy[k])
			}
			b, _ := os.ReadFile(filepath.Join(dir, k.File))
			if strings.TrimSpace(string(b)) != legacy[k] {
				t.Errorf("%s holds %q, want the store's key", k.File, b)
			}
		}
		noRows(t, st, All...)
	})

	t.Run("production", func(t *testing.T) {
		st := fill()
		_, err := Open(ctx, Config{}, st, Redaction)
		var missing *MissingError
		if !errors.As(err, &missing) || !missing.InStore || !strings.Contains(err.Error(), "hindsight keys export") || !strings.Contains(err.Error(), Redaction.Env) {
			t.Fatalf("production start with the key in the store and not in the environment: %v", err)
		}
		if v, _ := st.Setting(ctx, Redaction.Setting); v != legacy[Redaction] {
			t.Fatal("a refused start deleted the key from the store: the operator could not move it out")
		}
		lines, err := Export(ctx, st, All...)
		if err != nil || len(lines) != len(All) || lines[1] != Redaction.Env+"="+legacy[Redaction] {
			t.Fatalf("Export = %q, %v", lines, err)
		}
		s, err := Open(ctx, Config{Env: env(map[string]string{Redaction.Env: legacy[Redaction]})}, st, Redaction)
		if err != nil || string(s.Get(Redaction)) != legacy[Redaction] {
			t.Fatalf("production start with the store's key set: %q, %v", s.Get(Redaction), err)
		}
		noRows(t, st, Redaction)
		if v, _ := st.Setting(ctx, Console.Setting); v == "" {
			t.Error("a key the process did not open left the store")
		}
	})

	t.Run("production without a key", func(t *testing.T) {
		_, err := Open(ctx, Config{}, memory.NewMemStore(), Console)
		var missing *MissingError
		if !errors.As(err, &missing) || missing.InStore || !strings.Contains(err.Error(), "openssl rand -hex 32") {
			t.Fatalf("production start without a key: %v", err)
		}
		if _, err := Open(ctx, Config{Env: env(map[string]string{Console.Env: "short"})}, nil, Console); err == nil || !strings.Contains(err.Error(), "at least 16") {
			t.Fatalf("a 5-character key: %v", err)
		}
		s, err := Open(ctx, Config{Ephemeral: true}, memory.NewMemStore(), Console)
		if err != nil || len(s.Get(Console)) != 64 {
			t.Fatalf("an ephemeral key: %q, %v", s.Get(Console), err)
		}
	})
}
