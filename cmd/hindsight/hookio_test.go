package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A hook's payload reaches its detached process whole through a file of
// its own, which is removed once read.
func TestHookPayloadThroughAFile(t *testing.T) {
	t.Setenv("HINDSIGHT_CACHE", t.TempDir())
	payload := bytes.Repeat([]byte(`{"prompt":"x"}`), 300<<10/14)
	file, err := writeHookPayload(payload)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("payload file %s: %v, %v; want it readable by this user only", file, st.Mode(), err)
	}
	got, err := readHookPayload(file)
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("read %d bytes (%v), want the %d written", len(got), err, len(payload))
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the payload file is still there: %v", err)
	}
}

// Only regular files are read, within the cap: a longer log is its head
// and tail, cut at line boundaries; a FIFO is refused at once.
func TestReadRegularFile(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 100 {
		b.WriteString(strings.Repeat(string(rune('a'+i%26)), 9) + "\n") // 10-byte lines
	}
	log := filepath.Join(dir, "log.jsonl")
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := readRegularFile(log, 2000, time.Second)
	if err != nil || r.cut || r.data == nil || len(r.data) != 1000 {
		t.Fatalf("under the cap: %d bytes, cut %v, %v", len(r.data), r.cut, err)
	}
	r, err = readRegularFile(log, 400, time.Second)
	if err != nil || !r.cut {
		t.Fatalf("over the cap: cut %v, %v", r.cut, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(r.data), "\n"), "\n")
	if len(lines) != 30+9 || lines[0] != "aaaaaaaaa" || lines[len(lines)-1] != strings.Repeat(string(rune('a'+99%26)), 9) {
		t.Errorf("over the cap: %d lines %q … %q; want the first 30 and the last 9 whole", len(lines), lines[0], lines[len(lines)-1])
	}
	for _, l := range lines {
		if len(l) != 9 {
			t.Errorf("a line cut in two: %q", l)
		}
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := readRegularFile(fifo, 400, time.Second); err == nil || !strings.Contains(err.Error(), "not a regular file (a named pipe)") {
		t.Errorf("a FIFO: %v", err)
	}
	if _, err := readRegularFile(dir, 400, time.Second); err == nil || !strings.Contains(err.Error(), "a directory") {
		t.Errorf("a directory: %v", err)
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("refusing took %v", took)
	}
}

func TestShellAndTOMLQuoting(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/local/bin/hindsight": "/usr/local/bin/hindsight",
		"/Users/ana/My Tools/hs":   "'/Users/ana/My Tools/hs'",
		"/tmp/it's":                `'/tmp/it'\''s'`,
		"":                         "''",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
	if got := tomlString("C:\\Tools\\\"hs\"\n"); got != `"C:\\Tools\\\"hs\"\u000A"` {
		t.Errorf("tomlString: %s", got)
	}
}
