package inject

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"
)

//go:generate go run ../../cmd/hindsight train injection --data data --out model.gz

// ModelFile is the shipped model, trained by "hindsight train injection"
// on data/ (never on heldout/).
//
//go:embed model.gz
var modelFile []byte

var shipped struct {
	once sync.Once
	m    *Model
	err  error
}

// Default returns the shipped model. It fails only if the embedded file
// is broken or was written for other features, which a test catches
// before release.
func Default() (*Model, error) {
	shipped.once.Do(func() {
		m, err := Decode(bytes.NewReader(modelFile))
		if err == nil && m.Features != FeatureVersion {
			err = fmt.Errorf("inject: the shipped model was trained with features %s, this build computes %s: run hindsight train injection", m.Features, FeatureVersion)
		}
		shipped.m, shipped.err = m, err
	})
	return shipped.m, shipped.err
}

// Attack reports whether text reads as an instruction to the agent that
// works against its operator or user (a prompt injection), by the shipped
// model: such text is quarantined. Without a usable model every text is
// suspect: a broken build quarantines rather than lets an injection
// through.
func Attack(text string) bool {
	m, err := Default()
	if err != nil {
		return true
	}
	return m.Attack(text)
}

// Suspect reports whether text scores at least four fifths of the
// quarantine threshold: not an injection by the model's reading, but close
// enough that recall shows it with a warning.
func Suspect(text string) bool {
	m, err := Default()
	if err != nil {
		return true
	}
	return m.Score(text) >= m.Threshold*0.8
}
