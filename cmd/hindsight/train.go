package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hindsight-memory/hindsight/lang/classify"
)

func runTrain(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "classifiers" {
		fmt.Fprint(os.Stderr, "Usage: hindsight train classifiers [flags]\n\n  classifiers  the user-statement and agent-insight sentence classifiers of the offline write path\n")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return nil
		}
		return errUsage
	}
	fs := newFlags("train classifiers", "[flags]", `
Train the offline write path's sentence classifiers on the labelled
messages in --data (see its README.md) and write them to --out, where the
binary embeds them from (lang/classify/models). Training is deterministic:
the same data gives the same files. With --cv it also prints 5-fold
cross-validation and leave-one-file-out scores (each data file held out in
turn: how the models carry over to domains they were not trained on).`)
	data := fs.String("data", filepath.Join("lang", "classify", "data"), "folder of labelled *.jsonl files")
	outDir := fs.String("out", filepath.Join("lang", "classify", "models"), "folder to write the models to")
	cv := fs.Bool("cv", false, "also print cross-validation scores")
	mistakes := fs.Int("mistakes", 0, "with --cv, print this many held-out mistakes per model")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	xs, err := classify.LoadData(os.DirFS(*data), ".")
	if err != nil {
		return fmt.Errorf("%s: %w", *data, err)
	}
	if err := os.MkdirAll(filepath.Join(*outDir), 0o755); err != nil {
		return err
	}
	for _, role := range []classify.Role{classify.RoleUser, classify.RoleAssistant} {
		rx := classify.OfRole(xs, role)
		labels := classify.LabelsOf(role)
		m, err := classify.Train(string(role), labels, rx, classify.TrainOptions{})
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := m.Encode(&buf); err != nil {
			return err
		}
		path := filepath.Join(*outDir, filepath.Base(classify.ModelFile(role)))
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: %d examples, %d features, %d bytes → %s\n", role, len(rx), m.Size(), buf.Len(), path)
		if !*cv {
			continue
		}
		for _, byFile := range []bool{false, true} {
			r, err := classify.CrossValidate(string(role), labels, rx, 5, byFile, classify.TrainOptions{})
			if err != nil {
				return err
			}
			if byFile {
				fmt.Fprintln(out, "  leave one file out:")
			} else {
				fmt.Fprintln(out, "  5-fold cross-validation:")
			}
			if err := r.WriteText(out); err != nil {
				return err
			}
			if byFile {
				for i, mk := range r.Mistakes {
					if i == *mistakes {
						break
					}
					fmt.Fprintf(out, "    %s:%d [%s→%s %.2f] %s\n", mk.File, mk.Line, mk.Label, mk.Predicted, mk.P, mk.Text)
				}
			}
		}
	}
	return nil
}
