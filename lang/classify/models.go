package classify

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hindsight-memory/hindsight/lang"
)

//go:generate go run ../../cmd/hindsight train classifiers --data data --out models

// The trained models, embedded.
//
//go:embed models
var modelFiles embed.FS

// ModelFile is where a role's model is kept, in models/.
func ModelFile(r Role) string { return "models/" + string(r) + ".model.gz" }

var loaded struct {
	once   sync.Once
	models map[Role]*Model
	err    error
}

// For returns the shipped model of a role. It fails only if the embedded
// file is missing or was written for another feature version, which a
// test catches before release.
func For(r Role) (*Model, error) {
	loaded.once.Do(func() {
		loaded.models = map[Role]*Model{}
		for _, role := range []Role{RoleUser, RoleAssistant} {
			data, err := modelFiles.ReadFile(ModelFile(role))
			if err != nil {
				loaded.err = fmt.Errorf("classifier %s: %w", role, err)
				return
			}
			m, err := Decode(bytes.NewReader(data))
			if err != nil {
				loaded.err = err
				return
			}
			loaded.models[role] = m
		}
	})
	if loaded.err != nil {
		return nil, loaded.err
	}
	return loaded.models[r], nil
}

// MustFor is For for callers that cannot go on without the model.
func MustFor(r Role) *Model {
	m, err := For(r)
	if err != nil {
		panic(err)
	}
	return m
}

// chatterP is the probability of "none" every sentence of a message needs
// for the message to be chatter.
const chatterP = 0.97

// maxChatterRunes bounds chatter: a long message says something, even if
// no sentence of it reads as a statement.
const maxChatterRunes = 300

// Chatter reports whether a user or assistant message holds nothing worth
// keeping, with high confidence: it is short and every sentence of it is
// "none" with probability at least chatterP. It never calls a message
// chatter when the models are missing.
func Chatter(role Role, text string, pos Position) bool {
	if utf8.RuneCountInString(text) > maxChatterRunes || strings.TrimSpace(text) == "" {
		return false
	}
	m, err := For(role)
	if err != nil || m == nil {
		return false
	}
	for _, s := range lang.Sentences(text) {
		if p := m.Predict(s, pos); p.P[0] < chatterP {
			return false
		}
	}
	return true
}
