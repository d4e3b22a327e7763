package main

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// hookRunners are the programs an agent may run a hook command through:
// the agent is the first ancestor of the hook that is none of them.
var hookRunners = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "fish": true, "ksh": true,
	"env": true, "timeout": true, "nohup": true, "setsid": true}

// agentProcess is the process ID of the agent that ran this hook: the
// first ancestor that is not a shell (agents run hook commands through
// one), or 0 when it cannot be told.
func agentProcess() int {
	pid := os.Getppid()
	for range 8 {
		if pid <= 1 {
			return 0
		}
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return 0
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
		if open < 0 || end < open {
			return 0
		}
		if !hookRunners[string(stat[open+1:end])] {
			return pid
		}
		fields := strings.Fields(string(stat[end+1:]))
		if len(fields) < 2 {
			return 0
		}
		if pid, err = strconv.Atoi(fields[1]); err != nil {
			return 0
		}
	}
	return 0
}

// processExit is closed when process pid exits (watched with a pidfd,
// without polling), at once if it is gone; nil when it cannot be watched.
func processExit(pid int) <-chan struct{} {
	if pid <= 0 {
		return nil
	}
	done := make(chan struct{})
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		close(done)
		return done
	}
	if err != nil {
		return nil
	}
	go func() {
		defer unix.Close(fd)
		defer close(done)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); !errors.Is(err, unix.EINTR) {
				return
			}
		}
	}()
	return done
}
