package mcpserver

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hindsight-memory/hindsight/ledger"
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

// argLimit bounds one argument's text: an identifier (printable, at most
// memory.MaxID bytes, no surrounding space) or a name or short text of at
// most max bytes; items bounds a list's length.
type argLimit struct {
	id    bool
	max   int
	items int
}

// argLimits are the limits of every identifier and name a tool takes (the
// domain's table, memory.MaxID and the rest): a longer value is refused
// with the argument's name and the limit before anything is looked up or
// queued, and the error quotes only a short, escaped prefix of it. Texts
// with limits of their own (content, query, events) are checked where
// they are used.
var argLimits = map[string]argLimit{
	"memory_id":    {id: true},
	"memory_ids":   {id: true, items: ledger.MaxFeedbackMemories},
	"request_id":   {id: true},
	"event_id":     {id: true},
	"decision_id":  {id: true},
	"session_id":   {id: true},
	"user_id":      {max: memory.MaxName},
	"agent_id":     {max: memory.MaxName},
	"agent":        {max: memory.MaxName},
	"tool_name":    {max: memory.MaxName},
	"project":      {max: memory.MaxProject},
	"project_name": {max: memory.MaxName},
	"task_type":    {max: memory.MaxTaskType},
	"entities":     {max: memory.MaxEntity, items: memory.MaxEntities},
	"kinds":        {max: 32, items: 8},
	"task":         {max: memory.MaxTask},
	"kind":         {max: 32},
	"role":         {max: 32},
	"outcome":      {max: 32},
	"scope":        {max: memory.MaxName + 16},
	"since":        {max: 64},
	"until":        {max: 64},
	"ts":           {max: 64},
	"started_at":   {max: 64},
	"ended_at":     {max: 64},
}

// checkLimit checks v, the value of argument name (field in errors: the
// name, or an item of it), against the argument's limit.
func checkLimit(name, field, v string) error {
	lim, ok := argLimits[name]
	if !ok {
		return nil
	}
	var err error
	if lim.id {
		err = memory.CheckID("", field, v)
	} else {
		err = memory.CheckName("", field, v, lim.max)
	}
	if err != nil {
		return badArg("%s", memory.ErrorMessage(err))
	}
	return nil
}

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
		if err := checkLimit(name, name, x); err != nil {
			return "", err
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
	return 0, false, badArg("%s must be %s, got %s", name, want, memory.Quote(fmt.Sprint(v)))
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
		return false, badArg("%s must be true or false, got %s", name, memory.Quote(x))
	}
	return false, badArg("%s must be true or false, got %s", name, jsonType(v))
}

// strings accepts a list of strings or one comma-separated string.
func (a args) strings(name string) ([]string, error) {
	v, ok := a[name]
	if !ok || v == nil {
		return nil, nil
	}
	var items []string
	switch x := v.(type) {
	case string:
		items = strings.Split(x, ",")
	case []any:
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, badArg("%s[%d] must be a string, got %s", name, i, jsonType(e))
			}
			items = append(items, s)
		}
	default:
		return nil, badArg("%s must be a list of strings, got %s", name, jsonType(v))
	}
	var out []string
	for _, s := range items {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	if lim := argLimits[name]; lim.items > 0 && len(out) > lim.items {
		return nil, badArg("%s has %d items; the limit is %d", name, len(out), lim.items)
	}
	for i, s := range out {
		if err := checkLimit(name, fmt.Sprintf("%s[%d]", name, i), s); err != nil {
			return nil, err
		}
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
		return time.Time{}, badArg("%s must be an RFC 3339 time or a date like 2026-03-01, got %s", name, memory.Quote(s))
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
