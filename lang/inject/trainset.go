package inject

import (
	"fmt"
	"io/fs"

	"github.com/hindsight-memory/hindsight/lang/classify"
)

// MemoryHoldout keeps every k-th ordinary memory out of training, to
// measure how many the detector would quarantine.
const MemoryHoldout = 5

// TrainingSet is what the shipped model is trained on: the labelled texts
// of data (attacks and hard negatives, written for the detector), and
// ordinary memories from the statement classifiers' data in statements
// (what people told agents that became memories, the memories written
// from it, and the lessons agents drew), all benign: what ordinary
// memories look like, imperatives and all. Every holdout-th ordinary
// memory is returned apart, in unseen, to measure with; holdout 0 keeps
// none apart. statements may be nil.
func TrainingSet(data fs.FS, statements fs.FS, holdout int) (train, unseen []Example, err error) {
	train, err = LoadData(data, ".")
	if err != nil {
		return nil, nil, err
	}
	if statements == nil {
		return train, nil, nil
	}
	sx, err := classify.LoadData(statements, ".")
	if err != nil {
		return nil, nil, fmt.Errorf("statements: %w", err)
	}
	var mem []Example
	for _, x := range sx {
		if x.Memory != "" {
			mem = append(mem, Example{Text: x.Memory, Label: LabelBenign, Lang: x.Lang, Family: "memory", File: x.File, Line: x.Line})
		}
		if x.Label != "none" {
			mem = append(mem, Example{Text: x.Text, Label: LabelBenign, Lang: x.Lang, Family: "statement", File: x.File, Line: x.Line})
		}
	}
	for i, x := range mem {
		if holdout > 0 && i%holdout == holdout-1 {
			unseen = append(unseen, x)
		} else {
			train = append(train, x)
		}
	}
	return train, unseen, nil
}
