package redact

import (
	"crypto/rand"
	"sync"
)

// processKey keys the redactors of processes that were given none: made
// at random once, for this process alone.
var processKey = sync.OnceValue(func() []byte {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return b
})

// ForProcess returns a redactor keyed for this process alone, for a
// process whose data dies with it (tests, an in-memory store): every
// ForProcess redactor of the process hashes alike, and no other process
// recognises its placeholders as its own. A deployment configures its
// redactor with the deployment's key (package keys).
func ForProcess(policy Policy) *Redactor {
	return New(processKey(), policy)
}

// Or returns configured when it is set, else ForProcess(policy).
func Or(configured *Redactor, policy Policy) *Redactor {
	if configured != nil {
		return configured
	}
	return ForProcess(policy)
}
