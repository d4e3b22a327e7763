package examples

import (
	"embed"
	"io/fs"
	"slices"
)

//go:embed *.json
var files embed.FS

// Sample is one example transcript.
type Sample struct {
	Name string // file name, e.g. "01_csv_import_gbk.json"
	Data []byte // the transcript as JSON, for memory.ParseTranscript
}

// All returns the samples in name order (which is also the order their
// sessions happened in).
func All() []Sample {
	names, err := fs.Glob(files, "*.json")
	if err != nil {
		panic("examples: " + err.Error()) // the pattern is constant
	}
	slices.Sort(names)
	out := make([]Sample, 0, len(names))
	for _, n := range names {
		data, err := files.ReadFile(n)
		if err != nil {
			panic("examples: " + err.Error()) // embedded files are always readable
		}
		out = append(out, Sample{Name: n, Data: data})
	}
	return out
}
