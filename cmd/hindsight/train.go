package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hindsight-memory/hindsight/lang"
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
	langDir := fs.String("lang", "lang", "folder of package lang, where the background term statistics go")
	cv := fs.Bool("cv", false, "also print cross-validation scores")
	predict := fs.String("predict", "", "instead of training, classify each line of standard input with the shipped models: user, assistant (prefix a line with 'opening:' or 'final:' for its position)")
	mistakes := fs.Int("mistakes", 0, "with --cv, print this many held-out mistakes per model")
	var opts classify.TrainOptions
	fs.IntVar(&opts.Epochs, "epochs", 0, "training epochs (0: the default)")
	fs.Float64Var(&opts.L2, "l2", 0, "L2 weight decay (0: the default)")
	fs.Float64Var(&opts.Rate, "rate", 0, "AdaGrad learning rate (0: the default)")
	dry := fs.Bool("dry-run", false, "do not write the models (with --cv: just measure)")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if *predict != "" {
		return predictLines(*predict, os.Stdin, out)
	}
	xs, err := classify.LoadData(os.DirFS(*data), ".")
	if err != nil {
		return fmt.Errorf("%s: %w", *data, err)
	}
	if err := os.MkdirAll(filepath.Join(*outDir), 0o755); err != nil {
		return err
	}
	// The background term statistics recall weighs query terms with
	// (lang.Specificity), counted on every sentence.
	var texts []string
	for _, x := range xs {
		texts = append(texts, x.Text)
	}
	var bg bytes.Buffer
	if err := lang.WriteBackground(&bg, texts, classify.Hash(xs), 3); err != nil {
		return err
	}
	bgPath := filepath.Join(*langDir, "background.gz")
	if !*dry {
		if err := os.WriteFile(bgPath, bg.Bytes(), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "background: %d sentences, %d bytes → %s\n", len(texts), bg.Len(), bgPath)
	for _, role := range []classify.Role{classify.RoleUser, classify.RoleAssistant} {
		rx := classify.OfRole(xs, role)
		labels := classify.LabelsOf(role)
		m, err := classify.Train(string(role), labels, rx, classify.OptionsFor(role, opts))
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := m.Encode(&buf); err != nil {
			return err
		}
		path := filepath.Join(*outDir, filepath.Base(classify.ModelFile(role)))
		if *dry {
			path = "(not written)"
		} else if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: %d examples, %d features, %d bytes → %s\n", role, len(rx), m.Size(), buf.Len(), path)
		if !*cv {
			continue
		}
		for _, byFile := range []bool{false, true} {
			r, err := classify.CrossValidate(string(role), labels, rx, 5, byFile, classify.OptionsFor(role, opts))
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

// predictLines prints the shipped model's reading of each input line, with
// the features that pull most towards its label.
func predictLines(role string, in io.Reader, out io.Writer) error {
	m, err := classify.For(classify.Role(role))
	if err != nil {
		return err
	}
	if m == nil {
		return fmt.Errorf("--predict %q: want user or assistant", role)
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		pos := classify.Later
		for _, p := range []classify.Position{classify.Opening, classify.Final} {
			if rest, ok := strings.CutPrefix(line, string(p)+":"); ok {
				pos, line = p, strings.TrimSpace(rest)
			}
		}
		p := m.Predict(line, pos)
		var probs []string
		for i, l := range m.Labels {
			probs = append(probs, fmt.Sprintf("%s %.2f", l, p.P[i]))
		}
		var why []string
		for _, c := range m.Explain(line, pos, p.Label, 6) {
			why = append(why, fmt.Sprintf("%s %+.2f", c.Feature, c.Weight))
		}
		fmt.Fprintf(out, "%-10s %s | %s\n    %s\n", p.Label, strings.Join(probs, " "), line, strings.Join(why, ", "))
	}
	return sc.Err()
}
