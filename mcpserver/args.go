package mcpserver

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// args reads tool arguments leniently: agents send numbers as strings and
// lists as comma-separated text, and both are fine. Every error names the
// argument and says what is expected.
type args map[string]any

// argError is a bad argument; the handler turns it into a tool error.
type argError struct{ msg string }

func (e *argError) Error() string { return e.msg }

func badArg(format string, a ...any) error { return &argError{fmt.Sprintf(format, a...)} }

func (a args) has(name string) bool {
	v, ok := a[name]
	return ok && v != nil
}

func (a args) str(name string, required bool) (string, error) {
	v, ok := a[name]
	if !ok || v == nil {
		if required {
			return "", badArg("%s is required", name)
		}
		return "", nil
	}
	switch x := v.(type) {
	case string:
		if required && strings.TrimSpace(x) == "" {
			return "", badArg("%s must not be empty", name)
		}
		return x, nil
	}
	// A number or a boolean where text is expected is a mistake to report,
	// not to store as "42".
	return "", badArg("%s must be a string, got %s", name, jsonType(v))
}

// float reads a number sent as a JSON number or as text; ok is false when
// the argument is absent. want describes the expected value for errors.
func (a args) float(name, want string) (f float64, ok bool, err error) {
	v, present := a[name]
	if !present || v == nil {
		return 0, false, nil
	}
	switch x := v.(type) {
	case float64:
		return x, true, nil
	case json.Number:
		if f, err = x.Float64(); err == nil {
			return f, true, nil
		}
	case string:
		if f, err = strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
			return f, true, nil
		}
	default:
		return 0, false, badArg("%s must be %s, got %s", name, want, jsonType(v))
	}
	return 0, false, badArg("%s must be %s, got %q", name, want, fmt.Sprint(v))
}

func (a args) integer(name string, def, lo, hi int) (int, error) {
	want := fmt.Sprintf("an integer between %d and %d", lo, hi)
	f, ok, err := a.float(name, want)
	if err != nil || !ok {
		return def, err
	}
	if f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, badArg("%s must be %s, got %v", name, want, f)
	}
	return int(f), nil
}

func (a args) number(name string, def, lo, hi float64) (float64, error) {
	want := fmt.Sprintf("a number between %g and %g", lo, hi)
	f, ok, err := a.float(name, want)
	if err != nil || !ok {
		return def, err
	}
	if f < lo || f > hi || math.IsNaN(f) {
		return 0, badArg("%s must be %s, got %g", name, want, f)
	}
	return f, nil
}

func (a args) boolean(name string, def bool) (bool, error) {
	v, ok := a[name]
	if !ok || v == nil {
		return def, nil
	}
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return false, badArg("%s must be true or false, got %q", name, x)
	}
	return false, badArg("%s must be true or false, got %s", name, jsonType(v))
}

// strings accepts a list of strings or one comma-separated string.
func (a args) strings(name string) ([]string, error) {
	v, ok := a[name]
	if !ok || v == nil {
		return nil, nil
	}
	var out []string
	switch x := v.(type) {
	case string:
		for _, s := range strings.Split(x, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	case []any:
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, badArg("%s[%d] must be a string, got %s", name, i, jsonType(e))
			}
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	default:
		return nil, badArg("%s must be a list of strings, got %s", name, jsonType(v))
	}
	return out, nil
}

// time reads a time by memory.ParseTime's rule: RFC 3339, or a time or a
// date without a zone, read in loc (the deployment's time zone).
func (a args) time(name string, loc *time.Location) (time.Time, error) {
	s, err := a.str(name, false)
	if err != nil || s == "" {
		return time.Time{}, err
	}
	t, err := memory.ParseTime(s, loc)
	if err != nil {
		return time.Time{}, badArg("%s must be an RFC 3339 time or a date like 2026-03-01, got %q", name, s)
	}
	return t, nil
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
