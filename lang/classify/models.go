package classify

import (
	"bytes"
	"embed"
	"fmt"
	"sync"
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
