// Package redact finds secrets and personal data in text before Hindsight
// stores it, and replaces them by typed placeholders.
//
// A secret (an API key, a token, a password in a URL, an assignment, a
// command line or a sentence, a private key) is always replaced by
// ⟨secret:KIND:HASH~TAG⟩, where HASH is a short keyed hash of the secret,
// so that two mentions of one secret stay recognisably the same and a
// lesson keeps its shape ("connect with
// postgres://app:⟨secret:password:1f9c2a7b~3e91c0d4⟩@db:5432/prod")
// without the secret. Personal data (emails, phone numbers, payment cards,
// national ID numbers, IP addresses) follows a Policy: kept, masked or
// dropped per class. TAG is a keyed hash of the placeholder itself: a
// placeholder this key wrote is never detected again, so redacting twice
// changes nothing, while text in ⟨…⟩ that it did not write is read like
// any other text, and a forged placeholder is replaced.
package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/hindsight-memory/hindsight/memory"
)

// Action is what a policy does with a class of personal data.
type Action string

// Actions.
const (
	Keep Action = "keep" // stored as written
	Mask Action = "mask" // replaced by a placeholder that keeps a hint (the last digits)
	Drop Action = "drop" // replaced by a placeholder that keeps nothing
)

// Classes of personal data.
const (
	ClassEmail      = "email"
	ClassPhone      = "phone"
	ClassCard       = "card"
	ClassNationalID = "national_id"
	ClassIP         = "ip"
	ClassAddress    = "address"
)

// Classes lists the personal-data classes a Policy decides on.
var Classes = []string{ClassEmail, ClassPhone, ClassAddress, ClassCard, ClassNationalID, ClassIP}

// Policy says what happens to each class of personal data.
type Policy map[string]Action

// DefaultPolicy keeps what a memory may legitimately need (a contact
// email or phone, a delivery address, an IP in an ops lesson) and masks payment cards and
// national ID numbers.
func DefaultPolicy() Policy {
	return Policy{ClassEmail: Keep, ClassPhone: Keep, ClassAddress: Keep, ClassCard: Mask, ClassNationalID: Mask, ClassIP: Keep}
}

// ParsePolicy reads "card=mask,email=keep,…" over the default policy. An
// unknown class or action is an error that names the known ones.
func ParsePolicy(s string) (Policy, error) {
	p := DefaultPolicy()
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		class, action, ok := strings.Cut(part, "=")
		class, action = strings.TrimSpace(class), strings.TrimSpace(action)
		if !ok || !slices.Contains(Classes, class) {
			return nil, fmt.Errorf("personal data policy: %q: want CLASS=ACTION with CLASS one of %s", part, strings.Join(Classes, ", "))
		}
		switch a := Action(action); a {
		case Keep, Mask, Drop:
			p[class] = a
		default:
			return nil, fmt.Errorf("personal data policy: %q: action must be keep, mask or drop", part)
		}
	}
	return p, nil
}

// String writes the policy as ParsePolicy reads it, in class order.
func (p Policy) String() string {
	var parts []string
	for _, c := range Classes {
		parts = append(parts, c+"="+string(p.action(c)))
	}
	return strings.Join(parts, ",")
}

func (p Policy) action(class string) Action {
	if a, ok := p[class]; ok {
		return a
	}
	return DefaultPolicy()[class]
}

// Finding is one secret or piece of personal data found in a text.
type Finding struct {
	Kind  string // e.g. "aws-access-key", "password", "card"
	Class string // "secret", or the personal-data class
	Start int    // byte offsets of the value in the text
	End   int
}

// Redactor replaces secrets and personal data. The zero value is not
// usable; use New.
type Redactor struct {
	key    []byte
	policy Policy
}

// New returns a Redactor whose placeholders carry hashes keyed with key
// (any bytes; keep it secret, or the hash of a short password can be
// guessed) and which treats personal data by policy (nil: the default).
func New(key []byte, policy Policy) *Redactor {
	if policy == nil {
		policy = DefaultPolicy()
	}
	return &Redactor{key: slices.Clone(key), policy: policy}
}

// Redact returns text with every secret replaced and personal data
// treated by policy, and what it found.
func (r *Redactor) Redact(text string) (string, []Finding) {
	fs := r.Find(text)
	if len(fs) == 0 {
		return text, nil
	}
	var b strings.Builder
	last := 0
	var done []Finding
	for _, f := range fs {
		var body string
		if f.Class == ClassSecret {
			body = "secret:" + f.Kind + ":" + r.hash(text[f.Start:f.End])
		} else {
			switch r.policy.action(f.Class) {
			case Keep:
				continue
			case Mask:
				body = mask(f, text[f.Start:f.End], r.hash(text[f.Start:f.End]))
			case Drop:
				body = f.Kind
			}
		}
		b.WriteString(text[last:f.Start])
		b.WriteString(r.placeholder(body))
		last = f.End
		done = append(done, f)
	}
	if len(done) == 0 {
		return text, nil
	}
	b.WriteString(text[last:])
	return b.String(), done
}

// String is Redact without the findings, of text with its control
// characters removed (memory.StripControls): what is stored.
func (r *Redactor) String(text string) string {
	s, _ := r.Redact(memory.StripControls(text))
	return s
}

// hash is the first 8 hex digits of HMAC-SHA256(key, secret).
func (r *Redactor) hash(secret string) string {
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte(secret))
	return hex.EncodeToString(m.Sum(nil))[:8]
}

// placeholder writes ⟨body~tag⟩, the tag marking it as this key's.
func (r *Redactor) placeholder(body string) string {
	return "⟨" + body + "~" + r.tag(body) + "⟩"
}

// tag is the keyed hash that marks a placeholder's body as written with
// this redactor's key: 8 hex digits, so that guessing one takes some
// four billion tries, each a stored text.
func (r *Redactor) tag(body string) string {
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte("hindsight placeholder\x00"))
	m.Write([]byte(body))
	return hex.EncodeToString(m.Sum(nil))[:8]
}

// ours reports whether body~tag is a placeholder this key wrote.
func (r *Redactor) ours(body, tag string) bool {
	return len(r.key) > 0 && hmac.Equal([]byte(tag), []byte(r.tag(body)))
}

// mask is the body of a placeholder that keeps a hint of personal data:
// a card's or ID's last four digits, an email's domain, a phone's last
// two digits.
func mask(f Finding, v, hash string) string {
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r == 'X' || r == 'x' {
			return r
		}
		return -1
	}, v)
	switch f.Class {
	case ClassCard, ClassNationalID:
		return f.Kind + " ending " + digits[max(0, len(digits)-4):]
	case ClassPhone:
		return "phone ending " + digits[max(0, len(digits)-2):]
	case ClassEmail:
		if _, domain, ok := strings.Cut(v, "@"); ok {
			return "email:" + hash + "@" + domain
		}
	}
	return f.Kind + ":" + hash
}

// Events redacts every text field of events in place.
func (r *Redactor) Events(es []memory.Event) {
	for i := range es {
		e := &es[i]
		e.Content, e.ToolArgs, e.ToolResult, e.Error = r.String(e.Content), r.String(e.ToolArgs), r.String(e.ToolResult), r.String(e.Error)
		e.ToolName = r.String(e.ToolName)
	}
}
