package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/lang/classify"
	"github.com/hindsight-memory/hindsight/lang/inject"
	"github.com/hindsight-memory/hindsight/lang/lexicon"
	"github.com/hindsight-memory/hindsight/recall"
)

func runTrain(ctx context.Context, args []string, out io.Writer) error {
	if len(args) > 0 && args[0] == "injection" {
		return runTrainInjection(ctx, args[1:], out)
	}
	if len(args) > 0 && args[0] == "relevance" {
		return runTrainRelevance(ctx, args[1:], out)
	}
	if len(args) == 0 || args[0] != "classifiers" {
		fmt.Fprint(os.Stderr, "Usage: hindsight train classifiers|injection|relevance [flags]\n\n  classifiers  the user-statement and agent-insight sentence classifiers of the offline write path\n  injection    the detector of memories that read as instructions to the agent (quarantine)\n  relevance    recall's model of whether a memory answers a query\n")
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

// runTrainInjection trains the prompt-injection detector (lang/inject).
func runTrainInjection(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("train injection", "[flags]", `
Train the detector of memories that read as instructions to the agent
(prompt injections), which quarantines them, on the labelled texts in
--data (see its README.md), and write it to --out, where the binary embeds
it from. The dictionaries (make dicts) lend it synonyms of the words the
data uses; it needs none to run. Training is deterministic. It prints the
scores on each file of --heldout, texts written apart from the training
data and never trained on: only the scores, never the texts missed or
flagged, so that no one changing the data or the cues reads them.`)
	data := fs.String("data", filepath.Join("lang", "inject", "data"), "folder of labelled *.jsonl files")
	heldout := fs.String("heldout", filepath.Join("lang", "inject", "heldout"), "folder of held-out labelled *.jsonl files")
	outFile := fs.String("out", filepath.Join("lang", "inject", "model.gz"), "file to write the model to")
	dry := fs.Bool("dry-run", false, "do not write the model")
	// Quarantining an ordinary memory hides it until a person looks, so
	// the threshold is set for few false quarantines (measured below on
	// ordinary memories not trained on); texts from four fifths of it stay
	// live with a warning. The intercept is the prior odds of an attack
	// (about 0.17), so a text of unknown words stays below both. Cross-validation on the training data does
	// not tell a better one: its hard negatives mirror its attacks closely,
	// and thresholds tuned there do not carry over to texts written apart.
	memories := fs.String("memories", filepath.Join("lang", "classify", "data"), "the statement classifiers' labelled messages: what people said that became memories, the memories, and agents' lessons are benign texts (empty: none)")
	memoryHoldout := fs.Int("memory-holdout", inject.MemoryHoldout, "keep every k-th of those out of training, to measure false quarantines on (0: train on all)")
	showMemories := fs.Int("show-memories", 0, "print this many of the ordinary memories flagged")
	bags := fs.Int("bags", 7, "how many fits to average")
	threshold := fs.Float64("threshold", 0.3, "the attack probability from which a text is quarantined")
	if err := parse(fs, args); err != nil {
		return err
	}
	var statements iofs.FS
	if *memories != "" {
		statements = os.DirFS(*memories)
	}
	xs, unseen, err := inject.TrainingSet(os.DirFS(*data), statements, *memoryHoldout)
	if err != nil {
		return fmt.Errorf("%s: %w", *data, err)
	}
	lex := lexicon.Default()
	if lex == nil {
		return fmt.Errorf("the dictionaries are needed to train (run make dicts): %w", lexicon.Err())
	}
	// Each text weighs the same: ordinary memories far outnumber
	// injections, in the data as in a store, and quarantining one of them
	// costs a person's review.
	opts := inject.TrainOptions{Expand: inject.SynonymsFrom(lex), Threshold: *threshold, AttackWeight: 1, Bags: *bags, PriorBias: true}
	m, err := inject.Train(xs, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "trained on %d texts (data %s)\n", m.Examples, m.Data)
	if *heldout != "" {
		hx, err := inject.LoadData(os.DirFS(*heldout), ".")
		if err != nil {
			return fmt.Errorf("%s: %w", *heldout, err)
		}
		// Each file is a set written apart by someone else: each is
		// scored on its own, so that one cannot make up for another, and
		// only its scores are printed (a held-out text read while the
		// data or the cues change is held out no longer).
		var files []string
		byFile := map[string][]inject.Example{}
		for _, x := range hx {
			if byFile[x.File] == nil {
				files = append(files, x.File)
			}
			byFile[x.File] = append(byFile[x.File], x)
		}
		for _, f := range files {
			r := m.Evaluate(byFile[f])
			fmt.Fprintf(out, "held out %s: %d attacks, %d benign: recall %.3f, false positives %.3f, precision %.3f\n",
				f, r.Attacks(), r.Benign(), r.Recall(), r.FalsePositives(), r.Precision())
		}
	}
	if len(unseen) > 0 {
		r := m.Evaluate(unseen)
		fmt.Fprintf(out, "ordinary memories not trained on: %d of %d flagged (%.3f)\n", r.Flagged(), r.Benign(), r.FalsePositives())
		for i, x := range r.False {
			if i < *showMemories {
				fmt.Fprintf(out, "  flagged %.2f  %s\n", m.Score(x.Text), x.Text)
			}
		}
	}
	if *dry {
		return nil
	}
	var b bytes.Buffer
	if err := m.Encode(&b); err != nil {
		return err
	}
	if err := os.WriteFile(*outFile, b.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s (%d bytes)\n", *outFile, b.Len())
	return nil
}

func runTrainRelevance(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("train relevance", "[flags]", `
Train recall's relevance model (the probability that a memory answers a
query) on the labelled pairs in --data (see its README.md), choose its
threshold on their held-out split, print the held-out scores, and write
the model and the held-out precision/recall curve to --out, where the
binary embeds the model from (recall/models). It needs the dictionaries
(make dicts): the model reads translations, synonyms, broader words and
definitions. Training is deterministic.`, "HINDSIGHT_DICTS")
	data := fs.String("data", filepath.Join("recall", "data"), "folder of labelled *.jsonl files")
	outDir := fs.String("out", filepath.Join("recall", "models"), "folder to write the model and its curve to")
	dry := fs.Bool("dry-run", false, "measure only; write nothing")
	if err := parse(fs, args); err != nil {
		return err
	}
	lx, err := lexicon.Load(lexicon.Dir())
	if err != nil {
		return err
	}
	groups, unrelated, err := recall.LoadRelevanceData(os.DirFS(*data), ".")
	if err != nil {
		return fmt.Errorf("%s: %w", *data, err)
	}
	m, rep, err := recall.TrainRelevance(groups, unrelated, lx, recall.RelevanceOptions())
	if err != nil {
		return err
	}
	rep.WriteText(out)
	if *dry {
		return nil
	}
	var buf, curve bytes.Buffer
	if err := m.Encode(&buf); err != nil {
		return err
	}
	rep.WriteCurve(&curve)
	for name, b := range map[string][]byte{recall.RelevanceModelFile: buf.Bytes(), "relevance.curve.tsv": curve.Bytes()} {
		if err := os.WriteFile(filepath.Join(*outDir, filepath.Base(name)), b, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "relevance: %d features, %d bytes → %s\n", m.Size(), buf.Len(), filepath.Join(*outDir, filepath.Base(recall.RelevanceModelFile)))
	return nil
}
