package learn

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/fnv"
	"slices"
	"strings"
)

// DataHash identifies a training set: a model records the hash of what it
// learnt from, so that a change to the data without a retrain shows. Add
// what the model learns from each example (its text and label, say), in
// order; Sum is the SHA-256 of it all.
type DataHash struct{ h hash.Hash }

// NewDataHash returns an empty DataHash.
func NewDataHash() *DataHash { return &DataHash{h: sha256.New()} }

// Add adds one example, as its fields: each is written in turn, separated
// by NUL bytes and ended by a newline.
func (d *DataHash) Add(fields ...string) {
	d.h.Write([]byte(strings.Join(fields, "\x00")))
	d.h.Write([]byte{'\n'})
}

// Sum returns "sha256:" and the hash of the examples added, in hex.
func (d *DataHash) Sum() string { return "sha256:" + hex.EncodeToString(d.h.Sum(nil)) }

// Fold returns the fold, 0 to k-1, that key falls in: its FNV-1a hash
// modulo k. An example keeps its fold whatever else is in the data, so
// that adding examples moves none of the others between folds.
func Fold(key string, k int) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(k))
}

// Split returns, in order, the examples for which heldOut says false
// (train) and those for which it says true (test).
func Split[T any](xs []T, heldOut func(i int, x T) bool) (train, test []T) {
	for i, x := range xs {
		if heldOut(i, x) {
			test = append(test, x)
		} else {
			train = append(train, x)
		}
	}
	return train, test
}

// Result is the prediction for one example made while it was held out.
type Result struct {
	// Index is the example's index in the data.
	Index int
	// P is the probability of each label.
	P []float64
}

// CrossValidate holds out each fold in turn (foldOf names an example's
// fold: Fold of a key, or a file name), trains on the rest with opts, and
// predicts the held-out examples (Model.Label). It returns the counts of what was
// predicted right, and each example's held-out prediction, fold by fold
// (folds in name order), in data order within a fold. A fold that leaves
// nothing to train on, or is empty, is skipped.
func CrossValidate(labels []string, xs []Example, foldOf func(i int) string, opts Options) (Confusion, []Result, error) {
	folds := make([]string, len(xs))
	var names []string
	for i := range xs {
		folds[i] = foldOf(i)
		if !slices.Contains(names, folds[i]) {
			names = append(names, folds[i])
		}
	}
	slices.Sort(names)
	c := NewConfusion(labels)
	var results []Result
	for _, name := range names {
		var train []Example
		var test []int
		for i, x := range xs {
			if folds[i] == name {
				test = append(test, i)
			} else {
				train = append(train, x)
			}
		}
		if len(train) == 0 || len(test) == 0 {
			continue
		}
		m, err := Train(labels, train, opts)
		if err != nil {
			return Confusion{}, nil, fmt.Errorf("fold %s: %w", name, err)
		}
		for _, i := range test {
			p := m.Predict(xs[i].Features)
			c.Add(xs[i].Label, m.Label(p))
			results = append(results, Result{Index: i, P: p})
		}
	}
	return c, results, nil
}
