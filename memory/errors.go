package memory

import (
	"errors"
	"fmt"
	"strings"
)

// Error codes. They are few on purpose: each edge (Temporal, MCP, HTTP, CLI)
// translates them once into its own vocabulary.
const (
	EINVALID  = "invalid"   // the caller sent something malformed; retrying won't help
	ENOTFOUND = "not_found" // the thing asked for does not exist (for this tenant)
	ECONFLICT = "conflict"  // the state changed underneath the caller; re-read and retry
	EINTERNAL = "internal"  // anything else; usually retryable
	// EMISCONFIGURED: the deployment is broken (a model file that does not
	// match the build, a missing key); retrying won't help until an
	// operator fixes it.
	EMISCONFIGURED = "misconfigured"
)

// Misconfiguredf returns an EMISCONFIGURED error for op.
func Misconfiguredf(op, format string, args ...any) error {
	return &Error{Code: EMISCONFIGURED, Op: op, Message: fmt.Sprintf(format, args...)}
}

// Error is a domain error: a code, the operation that failed, a message meant
// for the caller (it says what to fix), and an optional cause.
type Error struct {
	Code    string
	Op      string
	Message string
	Err     error
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	} else if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Op == "" {
		return msg
	}
	return e.Op + ": " + msg
}

func (e *Error) Unwrap() error { return e.Err }

// Invalidf returns an EINVALID error for op.
func Invalidf(op, format string, args ...any) error {
	return &Error{Code: EINVALID, Op: op, Message: fmt.Sprintf(format, args...)}
}

// NotFoundf returns an ENOTFOUND error for op.
func NotFoundf(op, format string, args ...any) error {
	return &Error{Code: ENOTFOUND, Op: op, Message: fmt.Sprintf(format, args...)}
}

// Conflictf returns an ECONFLICT error for op.
func Conflictf(op, format string, args ...any) error {
	return &Error{Code: ECONFLICT, Op: op, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, "" for nil
// and EINTERNAL for errors that carry no code.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) && e.Code != "" {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the caller-facing message of err: the message of the
// first *Error in its chain (with its cause), or err.Error().
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Error()
	}
	return err.Error()
}

// IsInvalid reports whether err carries EINVALID.
func IsInvalid(err error) bool { return ErrorCode(err) == EINVALID }

// IsNotFound reports whether err carries ENOTFOUND.
func IsNotFound(err error) bool { return ErrorCode(err) == ENOTFOUND }

// CallerMessage is what to tell a caller about err: the messages of its
// domain errors, outermost first, in the words of the checks that failed
// ("candidate 2: content is over 4000 characters", "memory m-1 not
// found"), without the layers it passed through on the way ("feedback:
// clickhouse: memory: …"), which belong in the log. An error without a
// domain message is told as it is.
func CallerMessage(err error) string {
	var parts []string
	for e := err; e != nil; e = errors.Unwrap(e) {
		if me, ok := e.(*Error); ok && me.Message != "" && (len(parts) == 0 || parts[len(parts)-1] != me.Message) {
			parts = append(parts, me.Message)
		}
	}
	if len(parts) == 0 {
		return err.Error()
	}
	return strings.Join(parts, ": ")
}
