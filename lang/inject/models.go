package inject

import (
	"bytes"
	_ "embed"
	"fmt"
	"strings"
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

// Read scores text once with the shipped model: attack says it reads as
// an instruction to the agent that works against its operator or user (a
// prompt injection), to be quarantined; suspect that it scores at least
// four fifths of the quarantine threshold, close enough that recall shows
// it with a warning (every attack is suspect). Without a usable model
// every text is both: a broken build quarantines rather than lets an
// injection through.
func Read(text string) (attack, suspect bool) {
	m, err := Default()
	if err != nil {
		return true, true
	}
	p := m.Score(text)
	return p >= m.Threshold, p >= m.Threshold*0.8
}

// Detector screens memory text with the shipped model: it is the
// memory.Screener of every process (the zero value is ready). Blank text
// is neither an attack nor suspect.
type Detector struct{}

// Screen reads text once (see Read): injected is Attack, instructionLike
// Suspect.
func (Detector) Screen(text string) (injected, instructionLike bool) {
	if strings.TrimSpace(text) == "" {
		return false, false
	}
	return Read(text)
}

// Attack reports whether text reads as a prompt injection (see Read).
func Attack(text string) bool {
	attack, _ := Read(text)
	return attack
}

// Suspect reports whether text comes close to reading as one (see Read).
func Suspect(text string) bool {
	_, suspect := Read(text)
	return suspect
}
