package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hindsight-memory/hindsight/gitrepo"
	"github.com/hindsight-memory/hindsight/memory"
)

// What a hook reads, it reads within bounds: an agent's hook must never
// hang or lose the session, whatever it is handed.
const (
	// maxHookPayload bounds a hook's JSON payload (a prompt pasted whole
	// is in it).
	maxHookPayload = 16 << 20
	// hookReadTimeout bounds reading the payload from stdin.
	hookReadTimeout = 2 * time.Second
	// maxTranscriptBytes bounds how much of an agent's log is read; a
	// longer one is read as its head and tail, cut at record boundaries.
	maxTranscriptBytes = 64 << 20
	// transcriptReadTimeout bounds reading a log (a file on a stalled
	// network mount, say).
	transcriptReadTimeout = 20 * time.Second
)

// readHookPayload reads a hook's payload: from the file the detaching
// hook wrote it to (which is then removed), else from stdin, within
// maxHookPayload and, on stdin, hookReadTimeout.
func readHookPayload(file string) ([]byte, error) {
	if file != "" {
		raw, err := readRegularFile(file, maxHookPayload, hookReadTimeout)
		os.Remove(file)
		if err != nil {
			return nil, fmt.Errorf("read the hook payload: %w", err)
		}
		return raw.data, nil
	}
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := io.ReadAll(io.LimitReader(os.Stdin, maxHookPayload+1))
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("read the hook payload: %w", r.err)
		}
		if len(r.data) > maxHookPayload {
			return nil, fmt.Errorf("read the hook payload: over %d MiB", maxHookPayload>>20)
		}
		return r.data, nil
	case <-time.After(hookReadTimeout):
		return nil, fmt.Errorf("read the hook payload: stdin was not closed within %v", hookReadTimeout)
	}
}

// writeHookPayload writes a payload to a file of its own, readable only by
// this user, for the detached process: it is handed over through the
// file, never the environment (which bounds its size and shows it to
// every process of the user).
func writeHookPayload(payload []byte) (string, error) {
	dir, err := cacheDir()
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "hooks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "payload-*.json")
	if err != nil {
		return "", err
	}
	if _, err := f.Write(payload); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// fileRead is what readRegularFile read: the data, and whether the file
// was longer than the cap (then data is its head and tail).
type fileRead struct {
	data []byte
	cut  bool
}

// readRegularFile reads path only if it is a regular file (never a FIFO,
// a device or a socket, which can block a reader for ever), within limit
// bytes and timeout. A longer file is read as its first three quarters
// of limit and its last quarter, each cut to whole lines (a log's
// records), as the parsers cut huge outputs.
func readRegularFile(path string, limit int64, timeout time.Duration) (fileRead, error) {
	// O_NONBLOCK: opening a FIFO does not wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fileRead{}, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fileRead{}, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return fileRead{}, fmt.Errorf("%s is not a regular file (%s); only a file is read", path, fileKind(st.Mode()))
	}
	type result struct {
		r   fileRead
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer f.Close()
		r, err := readBounded(f, st.Size(), limit)
		done <- result{r, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return fileRead{}, fmt.Errorf("read %s: %w", path, r.err)
		}
		return r.r, nil
	case <-time.After(timeout):
		return fileRead{}, fmt.Errorf("read %s: not done within %v", path, timeout)
	}
}

func readBounded(f *os.File, size, limit int64) (fileRead, error) {
	if size <= limit {
		data, err := io.ReadAll(io.LimitReader(f, limit))
		return fileRead{data: data}, err
	}
	head := make([]byte, limit*3/4)
	if _, err := f.ReadAt(head, 0); err != nil {
		return fileRead{}, err
	}
	tail := make([]byte, limit/4)
	if _, err := f.ReadAt(tail, size-int64(len(tail))); err != nil && !errors.Is(err, io.EOF) {
		return fileRead{}, err
	}
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		head = head[:i+1]
	}
	if i := bytes.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	}
	return fileRead{data: append(head, tail...), cut: true}, nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return m.Type().String()
}

// resolveProject turns a transcript's project, when it is a directory on
// this machine, into its repository's identity and name (gitrepo), so
// that the worktrees of one repository are one project; cwd is the
// directory when the transcript names none.
func resolveProject(ctx context.Context, t *memory.Transcript, cwd string) {
	if t.Project == "" {
		t.Project = cwd
	}
	if t.ProjectName != "" {
		return
	}
	p := memory.ProjectOf(t.Project, "")
	dir, ok := strings.CutPrefix(p.ID, memory.ProjectDirectory)
	if !ok {
		return
	}
	if r := gitrepo.Project(ctx, dir); r.ID != "" {
		t.Project, t.ProjectName = r.ID, r.Name
	}
}
