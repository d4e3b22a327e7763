//go:build !linux

package main

// agentProcess is the agent that ran this hook: its parent, as far as
// this system tells.
func agentProcess() int { return 0 }

// processExit cannot watch a process here: the Codex hand-over waits for
// the session to go idle only.
func processExit(pid int) <-chan struct{} { return nil }
