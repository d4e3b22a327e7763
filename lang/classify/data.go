package classify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/hindsight-memory/hindsight/learn"
)

// Role is who wrote a sentence: each role has a model of its own.
type Role string

// Roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Labels of user sentences, and of assistant sentences.
var (
	UserLabels      = []string{"none", "preference", "rule", "fact"}
	AssistantLabels = []string{"none", "insight"}
)

// LabelsOf returns the labels of a role's model; the first is the
// negative class.
func LabelsOf(r Role) []string {
	if r == RoleAssistant {
		return AssistantLabels
	}
	return UserLabels
}

// Example is one labelled sentence.
type Example struct {
	Text     string   `json:"text"`
	Label    string   `json:"label"`
	Position Position `json:"position"`
	Role     Role     `json:"role"`
	Lang     string   `json:"lang"`
	Scope    string   `json:"scope,omitempty"`
	Memory   string   `json:"memory,omitempty"`
	// File and Line say where it was read, for reports.
	File string `json:"file"`
	Line int    `json:"line"`
}

type wireMessage struct {
	Role      Role     `json:"role"`
	Lang      string   `json:"lang"`
	Position  Position `json:"position"`
	Sentences []struct {
		Text   string `json:"text"`
		Label  string `json:"label"`
		Scope  string `json:"scope"`
		Memory string `json:"memory"`
	} `json:"sentences"`
}

// LoadData reads every *.jsonl file of dir in fsys (in name order) and
// returns its sentences. A line that is not a valid message is an error
// naming the file and line.
func LoadData(fsys fs.FS, dir string) ([]Example, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".jsonl") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	var out []Example
	for _, name := range names {
		data, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		line := 0
		for sc.Scan() {
			line++
			text := bytes.TrimSpace(sc.Bytes())
			if len(text) == 0 {
				continue
			}
			var m wireMessage
			if err := json.Unmarshal(text, &m); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, line, err)
			}
			if m.Role != RoleUser && m.Role != RoleAssistant {
				return nil, fmt.Errorf("%s:%d: role %q is not user or assistant", name, line, m.Role)
			}
			pos := m.Position
			switch pos {
			case Opening, Later, Final:
			case "":
				pos = Later
			default:
				return nil, fmt.Errorf("%s:%d: position %q is not opening, later or final", name, line, pos)
			}
			labels := LabelsOf(m.Role)
			for _, s := range m.Sentences {
				if strings.TrimSpace(s.Text) == "" {
					continue
				}
				if !slices.Contains(labels, s.Label) {
					return nil, fmt.Errorf("%s:%d: label %q is not one of %s for %s sentences", name, line, s.Label, strings.Join(labels, ", "), m.Role)
				}
				out = append(out, Example{Text: s.Text, Label: s.Label, Position: pos, Role: m.Role, Lang: m.Lang,
					Scope: s.Scope, Memory: s.Memory, File: name, Line: line})
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return out, nil
}

// Hash is the SHA-256 of what a model learns from examples: each one's
// text, label and position, in order. A model records the hash of its
// training data, so that a change to the data without a retrain shows.
func Hash(xs []Example) string {
	h := learn.NewDataHash()
	for _, x := range xs {
		h.Add(x.Text, x.Label, string(x.Position))
	}
	return h.Sum()
}

// OfRole returns the examples of one role.
func OfRole(xs []Example, r Role) []Example {
	var out []Example
	for _, x := range xs {
		if x.Role == r {
			out = append(out, x)
		}
	}
	return out
}
