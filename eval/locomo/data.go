package locomo

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Conversation is one LoCoMo sample: sessions of turns and the questions
// asked about them.
type Conversation struct {
	ID       string
	SpeakerA string
	SpeakerB string
	Sessions []Session
	QA       []Question
}

// Session is one dated conversation session.
type Session struct {
	Number int
	Date   time.Time
	Turns  []Turn
}

// Turn is one utterance.
type Turn struct {
	DiaID   string // "D<session>:<turn>"
	Speaker string
	Text    string
	// Caption describes an image shared with the turn (BLIP caption).
	Caption string
}

// Question is one QA item with its evidence turns.
type Question struct {
	Text     string
	Category int
	Evidence []string // normalised dia IDs
}

// Category names, by the official mapping.
var categoryNames = map[int]string{
	1: "multi-hop",
	2: "temporal",
	3: "open-domain",
	4: "single-hop",
	5: "adversarial",
}

// CategoryName names a LoCoMo category.
func CategoryName(c int) string {
	if n, ok := categoryNames[c]; ok {
		return n
	}
	return "category " + strconv.Itoa(c)
}

type wireSample struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []struct {
		Question string   `json:"question"`
		Evidence []string `json:"evidence"`
		Category int      `json:"category"`
	} `json:"qa"`
}

type wireTurn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
	Caption string `json:"blip_caption"`
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// dateLayout is how LoCoMo writes session dates: "1:56 pm on 8 May, 2023".
const dateLayout = "3:04 pm on 2 January, 2006"

// Load reads a LoCoMo file (the format of data/locomo10.json).
func Load(path string) ([]Conversation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("locomo: %w", err)
	}
	return Parse(b)
}

// Parse reads LoCoMo JSON.
func Parse(b []byte) ([]Conversation, error) {
	var samples []wireSample
	if err := json.Unmarshal(b, &samples); err != nil {
		return nil, fmt.Errorf("locomo: not a LoCoMo file (a JSON list of {sample_id, conversation, qa}): %w", err)
	}
	out := make([]Conversation, 0, len(samples))
	for _, s := range samples {
		c := Conversation{ID: s.SampleID}
		if c.ID == "" {
			return nil, fmt.Errorf("locomo: a sample has no sample_id")
		}
		str := func(key string) string {
			var v string
			_ = json.Unmarshal(s.Conversation[key], &v)
			return v
		}
		c.SpeakerA, c.SpeakerB = str("speaker_a"), str("speaker_b")
		for key, raw := range s.Conversation {
			m := sessionKey.FindStringSubmatch(key)
			if m == nil {
				continue
			}
			n, _ := strconv.Atoi(m[1])
			sess := Session{Number: n}
			ds := str(key + "_date_time")
			var err error
			if sess.Date, err = time.Parse(dateLayout, ds); err != nil {
				return nil, fmt.Errorf("locomo: %s %s: date %q is not like %q", c.ID, key, ds, dateLayout)
			}
			var turns []wireTurn
			if err := json.Unmarshal(raw, &turns); err != nil {
				return nil, fmt.Errorf("locomo: %s %s: %w", c.ID, key, err)
			}
			for _, t := range turns {
				sess.Turns = append(sess.Turns, Turn{DiaID: normalizeDiaID(t.DiaID), Speaker: t.Speaker, Text: t.Text, Caption: t.Caption})
			}
			c.Sessions = append(c.Sessions, sess)
		}
		slices.SortFunc(c.Sessions, func(a, b Session) int { return a.Number - b.Number })
		for _, q := range s.QA {
			var ev []string
			for _, e := range q.Evidence {
				ev = append(ev, NormalizeEvidence(e)...)
			}
			c.QA = append(c.QA, Question{Text: q.Question, Category: q.Category, Evidence: ev})
		}
		out = append(out, c)
	}
	return out, nil
}

var (
	evidenceSplit = regexp.MustCompile(`[;,\s]+`)
	diaIDRE       = regexp.MustCompile(`^D:?(\d+):0*(\d+)$`)
)

// NormalizeEvidence turns one evidence string into dia IDs: lists are
// split ("D8:6; D9:17"), stray colons and leading zeros dropped
// ("D:11:26" → "D11:26", "D30:05" → "D30:5"), and strings naming no turn
// ("D") ignored.
func NormalizeEvidence(s string) []string {
	var out []string
	for _, part := range evidenceSplit.Split(strings.TrimSpace(s), -1) {
		if id := normalizeDiaID(part); id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func normalizeDiaID(s string) string {
	m := diaIDRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return ""
	}
	return "D" + strings.TrimLeft(m[1], "0") + ":" + m[2]
}
