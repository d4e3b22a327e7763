//go:build linux && amd64

package chdb

import (
	"syscall"
	"unsafe"
)

// chDB installs its own handlers for deadly signals when the engine starts,
// and chdb_set_signal_handlers_enabled(0), the call that opts out of them,
// resets the same signals to SIG_DFL. Either way the Go runtime would lose
// the handlers it relies on: SIGSEGV turns a nil dereference into a panic,
// and the others turn faults into Go tracebacks. guardSignals runs a chDB
// call and then puts back whatever handler was installed before it.
var guardedSignals = []syscall.Signal{
	syscall.SIGABRT, syscall.SIGSEGV, syscall.SIGILL, syscall.SIGBUS,
	syscall.SIGSYS, syscall.SIGFPE, syscall.SIGTSTP, syscall.SIGTRAP,
}

// kernelSigaction is struct sigaction as the x86-64 rt_sigaction system call
// takes it (not glibc's layout).
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

func sigaction(sig syscall.Signal, act, old *kernelSigaction) syscall.Errno {
	_, _, errno := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig),
		uintptr(unsafe.Pointer(act)), uintptr(unsafe.Pointer(old)), unsafe.Sizeof(uint64(0)), 0, 0)
	return errno
}

// guardSignals runs fn and restores the handlers of guardedSignals that fn
// changed. It reports whether any had to be restored.
func guardSignals(fn func()) (restored bool) {
	saved := make([]kernelSigaction, len(guardedSignals))
	for i, sig := range guardedSignals {
		sigaction(sig, nil, &saved[i])
	}
	defer func() {
		for i, sig := range guardedSignals {
			var now kernelSigaction
			sigaction(sig, nil, &now)
			if now != saved[i] {
				sigaction(sig, &saved[i], nil)
				restored = true
			}
		}
	}()
	fn()
	return false
}
