package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/hindsight-memory/hindsight/memory"
)

// Corpus is a scenario file.
type Corpus struct {
	Version   int        `json:"version"`
	Scenarios []Scenario `json:"scenarios"`
}

// Scenario is what one tenant lives through.
type Scenario struct {
	ID       string    `json:"id"`
	Lang     string    `json:"lang"`
	Tags     []string  `json:"tags"`
	Note     string    `json:"note,omitempty"`
	Sessions []Session `json:"sessions"`
	Final    *Final    `json:"final,omitempty"`
	Probes   []Probe   `json:"probes,omitempty"`
}

// Session is one transcript, exactly as session_end accepts it, with what
// it should yield.
type Session struct {
	Transcript memory.Transcript `json:"-"`
	// Expect lists what a careful person would keep from the session:
	// each must match a memory distilled from it.
	Expect []Matcher `json:"expect_memories,omitempty"`
	// MaxMemories bounds how many memories the session may distil; nil
	// means no bound.
	MaxMemories *int `json:"max_memories,omitempty"`
}

// Final is the memory state after the last session.
type Final struct {
	Live    []Matcher `json:"live,omitempty"`
	NotLive []Matcher `json:"not_live,omitempty"`
	Once    []Matcher `json:"once,omitempty"`
	MaxLive *int      `json:"max_live,omitempty"`
}

// Probe is one recall query after the last session.
type Probe struct {
	Query  string    `json:"query"`
	UserID string    `json:"user_id,omitempty"`
	Top1   *Matcher  `json:"top1,omitempty"`
	Top3   *Matcher  `json:"top3,omitempty"`
	Forbid []Matcher `json:"forbid,omitempty"`
	None   bool      `json:"none,omitempty"`
}

// Matcher says what a memory's text must and must not contain.
type Matcher struct {
	Kind memory.Kind `json:"kind,omitempty"`
	All  []string    `json:"all,omitempty"`
	Any  []string    `json:"any,omitempty"`
	None []string    `json:"none,omitempty"`
}

// Load reads a corpus file.
func Load(path string) (Corpus, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Corpus{}, err
	}
	c, err := Parse(data)
	if err != nil {
		return Corpus{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse reads a corpus and checks it: unique scenario IDs, unique session
// IDs within a scenario, valid kinds, and probes that check something.
func Parse(data []byte) (Corpus, error) {
	var c Corpus
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&c); err != nil {
		return Corpus{}, fmt.Errorf("not a scenario corpus: %w", err)
	}
	if c.Version != 1 {
		return Corpus{}, fmt.Errorf("corpus version %d is not supported (want 1)", c.Version)
	}
	ids := map[string]bool{}
	for i, s := range c.Scenarios {
		where := fmt.Sprintf("scenarios[%d]", i)
		if s.ID == "" {
			return Corpus{}, fmt.Errorf("%s has no id", where)
		}
		if ids[s.ID] {
			return Corpus{}, fmt.Errorf("%s: id %q is used twice", where, s.ID)
		}
		ids[s.ID] = true
		if len(s.Sessions) == 0 {
			return Corpus{}, fmt.Errorf("scenario %s has no sessions", s.ID)
		}
		sessions := map[string]bool{}
		for j, ss := range s.Sessions {
			if sessions[ss.Transcript.SessionID] {
				return Corpus{}, fmt.Errorf("scenario %s: sessions[%d]: session_id %q is used twice", s.ID, j, ss.Transcript.SessionID)
			}
			sessions[ss.Transcript.SessionID] = true
			for _, m := range ss.Expect {
				if err := m.check(); err != nil {
					return Corpus{}, fmt.Errorf("scenario %s: session %s: expect_memories: %w", s.ID, ss.Transcript.SessionID, err)
				}
			}
		}
		if s.Final != nil {
			for _, ms := range [][]Matcher{s.Final.Live, s.Final.NotLive, s.Final.Once} {
				for _, m := range ms {
					if err := m.check(); err != nil {
						return Corpus{}, fmt.Errorf("scenario %s: final: %w", s.ID, err)
					}
				}
			}
		}
		for j, p := range s.Probes {
			if strings.TrimSpace(p.Query) == "" {
				return Corpus{}, fmt.Errorf("scenario %s: probes[%d] has no query", s.ID, j)
			}
			if p.None && (p.Top1 != nil || p.Top3 != nil) {
				return Corpus{}, fmt.Errorf("scenario %s: probes[%d]: none excludes top1 and top3", s.ID, j)
			}
			if !p.None && p.Top1 == nil && p.Top3 == nil && len(p.Forbid) == 0 {
				return Corpus{}, fmt.Errorf("scenario %s: probes[%d] checks nothing: give top1, top3, forbid or none", s.ID, j)
			}
		}
	}
	return c, nil
}

// UnmarshalJSON reads a session: the transcript through
// memory.ParseTranscript, as session_end reads it, and the two fields
// beside it.
func (s *Session) UnmarshalJSON(data []byte) error {
	var extra struct {
		Expect      []Matcher `json:"expect_memories"`
		MaxMemories *int      `json:"max_memories"`
	}
	if err := json.Unmarshal(data, &extra); err != nil {
		return err
	}
	t, err := memory.ParseTranscript(data, nil)
	if err != nil {
		return fmt.Errorf("session: %s", memory.ErrorMessage(err))
	}
	*s = Session{Transcript: t, Expect: extra.Expect, MaxMemories: extra.MaxMemories}
	return nil
}

func (m Matcher) check() error {
	if m.Kind != "" && !m.Kind.Valid() {
		return fmt.Errorf("kind %q is not one of preference, lesson, fact, rule", m.Kind)
	}
	if len(m.All) == 0 && len(m.Any) == 0 && len(m.None) == 0 && m.Kind == "" {
		return fmt.Errorf("a matcher must say something: give kind, all, any or none")
	}
	return nil
}

// Text is what matchers read of a memory: its content and, for a lesson,
// its counter-example.
func Text(m memory.Memory) string {
	if m.Kind == memory.KindLesson && m.CounterExample != "" {
		return m.Content + "\n" + m.CounterExample
	}
	return m.Content
}

// Matches reports whether mem satisfies m.
func (m Matcher) Matches(mem memory.Memory) bool {
	if m.Kind != "" && m.Kind != mem.Kind {
		return false
	}
	text := strings.ToLower(Text(mem))
	has := func(s string) bool { return strings.Contains(text, strings.ToLower(s)) }
	for _, s := range m.All {
		if !has(s) {
			return false
		}
	}
	if len(m.Any) > 0 && !slices.ContainsFunc(m.Any, has) {
		return false
	}
	return !slices.ContainsFunc(m.None, has)
}

// String says what m asks for, in words.
func (m Matcher) String() string {
	var parts []string
	if m.Kind != "" {
		parts = append(parts, "a "+string(m.Kind))
	} else {
		parts = append(parts, "a memory")
	}
	if len(m.All) > 0 {
		parts = append(parts, "with all of "+quoteList(m.All))
	}
	if len(m.Any) > 0 {
		parts = append(parts, "with any of "+quoteList(m.Any))
	}
	if len(m.None) > 0 {
		parts = append(parts, "with none of "+quoteList(m.None))
	}
	return strings.Join(parts, " ")
}

func quoteList(ss []string) string {
	const show = 6
	q := make([]string, 0, min(len(ss), show))
	for i, s := range ss {
		if i == show {
			q = append(q, fmt.Sprintf("… %d more", len(ss)-show))
			break
		}
		q = append(q, fmt.Sprintf("%q", s))
	}
	return "[" + strings.Join(q, ", ") + "]"
}
