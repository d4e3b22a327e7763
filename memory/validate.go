package memory

import (
	"regexp"
	"strings"
)

// Validation shared by every store, so that the reference implementation and
// the adapters reject the same input with the same messages.

// ValidateEvents checks a batch of events before it is stored.
func ValidateEvents(op string, events []Event) error {
	for i, e := range events {
		if err := ValidateTenant(op, e.Tenant); err != nil {
			return Invalidf(op, "event %d: %v", i, ErrorMessage(err))
		}
		if e.SessionID == "" {
			return Invalidf(op, "event %d: session_id is required", i)
		}
		if e.ID == "" {
			return Invalidf(op, "event %d: id is required", i)
		}
		if !e.Role.Valid() {
			return Invalidf(op, "event %d: role %q is not one of user, assistant, tool, system", i, e.Role)
		}
	}
	return nil
}

// ValidateEpisode checks an episode before it is stored.
func ValidateEpisode(op string, ep Episode) error {
	if err := ValidateTenant(op, ep.Tenant); err != nil {
		return err
	}
	if ep.ID == "" {
		return Invalidf(op, "episode id is required")
	}
	switch ep.Status {
	case EpisodeLive, EpisodeCold, EpisodeSummary:
	default:
		return Invalidf(op, "episode %s: status %q is not one of live, cold, summary", ep.ID, ep.Status)
	}
	return nil
}

// ValidateMemories checks memory versions before they are stored.
func ValidateMemories(op string, ms []Memory) error {
	for _, m := range ms {
		if err := ValidateTenant(op, m.Tenant); err != nil {
			return err
		}
		if m.ID == "" {
			return Invalidf(op, "memory id is required")
		}
		if m.Version < 1 {
			return Invalidf(op, "memory %s: version must be at least 1, got %d", m.ID, m.Version)
		}
		if !m.Kind.Valid() {
			return Invalidf(op, "memory %s: kind %q is not one of preference, lesson, fact, rule", m.ID, m.Kind)
		}
		if !m.Status.Valid() {
			return Invalidf(op, "memory %s: status %q is not valid", m.ID, m.Status)
		}
		if !m.Scope.Valid() {
			return Invalidf(op, "memory %s: scope %q is not one of shared, user:ID, agent:ID", m.ID, m.Scope)
		}
	}
	return nil
}

// ValidateDecision checks a decision before it is logged.
func ValidateDecision(op string, d Decision) error {
	if err := ValidateTenant(op, d.Tenant); err != nil {
		return err
	}
	if d.ID == "" {
		return Invalidf(op, "decision id is required")
	}
	if d.Action == "" {
		return Invalidf(op, "decision %s: action is required", d.ID)
	}
	return nil
}

var settingRE = regexp.MustCompile(`^[A-Za-z0-9_.\-]{1,100}$`)

// ValidateSettingKey checks the key of a deployment-wide setting.
func ValidateSettingKey(op, key string) error {
	if !settingRE.MatchString(key) {
		return Invalidf(op, "setting key %q is not valid: use 1-100 letters, digits, '.', '_' or '-'", key)
	}
	return nil
}

// StripControls removes C0 and C1 control characters (NUL, BEL, ESC and
// the terminal sequences they start, DEL) from text that will be stored,
// keeping newline and tab: stored text is shown to people and agents, and
// a control character in it is never content.
func StripControls(s string) string {
	clean := true
	for _, r := range s {
		if isControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return -1
		}
		return r
	}, s)
}

func isControl(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\t' && r != '\r' || r == 0x7f || r >= 0x80 && r < 0xa0
}
