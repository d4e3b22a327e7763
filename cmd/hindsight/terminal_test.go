package main

import "testing"

func TestTerminalSafe(t *testing.T) {
	if got, want := terminalSafe("a\x1b[2Jb\tc\nd\x07"), `a\x1b[2Jb`+"\tc\nd"+`\x07`; got != want {
		t.Fatalf("terminalSafe = %q, want %q", got, want)
	}
	if s := "plain 中文\n"; terminalSafe(s) != s {
		t.Fatal("clean text changed")
	}
}
