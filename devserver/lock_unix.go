//go:build unix

package devserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockFileName is the file in DataDir that a running dev server holds an
// exclusive flock on. The lock, not the file, is what counts: the kernel drops
// it when the process exits, however it exits, so a crash never leaves a stale
// lock behind. The file holds the owner's PID only to make the error useful.
const lockFileName = "devserver.lock"

// dataDirLock is an exclusive claim on a DataDir.
type dataDirLock struct{ f *os.File }

// lockDataDir claims dir for this process, or says which process holds it.
// Two servers on one SQLite file would corrupt each other's shard ownership
// long before SQLite's own locking noticed anything.
func lockDataDir(dir string) (*dataDirLock, error) {
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("devserver: open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			owner := "another process"
			if b, rerr := os.ReadFile(path); rerr == nil {
				if pid := strings.TrimSpace(string(b)); pid != "" {
					owner = "process " + pid
				}
			}
			return nil, fmt.Errorf("%w: %s is used by %s; stop that dev server or choose another data directory",
				ErrDataDirInUse, dir, owner)
		}
		return nil, fmt.Errorf("devserver: lock %s: %w", path, err)
	}
	// Best effort: the PID only improves the message above.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dataDirLock{f: f}, nil
}

// release gives the DataDir up. The lock file stays: removing it would race
// with a server that opened it a moment ago and is about to lock it.
func (l *dataDirLock) release() error {
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	return l.f.Close()
}
