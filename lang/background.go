package lang

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Background term statistics: in how many sentences of a general corpus
// each term (Terms) occurs. The corpus is the labelled sentences Hindsight
// trains its classifiers on (lang/classify/data: users and agents talking
// about work across many domains, English and Chinese), so a term that
// people use for everything ("use", "file", "什么", "应该") is known to
// say little, and one they rarely use ("sftp", "含税") to say much.
// `hindsight train classifiers` writes background.gz from the same data.
//
//go:embed background.gz
var backgroundFile []byte

var background struct {
	once  sync.Once
	df    map[string]int
	n     int
	data  string
	maxID float64
}

func loadBackground() {
	background.df = map[string]int{}
	if len(backgroundFile) == 0 {
		return
	}
	zr, err := gzip.NewReader(bytes.NewReader(backgroundFile))
	if err != nil {
		return
	}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			if k == "#data" {
				background.data = v
			}
			continue
		}
		if k == "#sentences" {
			background.n = n
			continue
		}
		background.df[k] = n
	}
	if background.n > 0 {
		background.maxID = math.Log(float64(background.n+1) / 1)
	}
}

// BackgroundData is the hash of the corpus the statistics were counted
// on (see WriteBackground).
func BackgroundData() string {
	background.once.Do(loadBackground)
	return background.data
}

// Specificity says how much a term says, from 0 (used everywhere) to 1
// (rare or unknown to the background corpus): its inverse document
// frequency in the corpus, scaled by the largest possible.
func Specificity(term string) float64 {
	background.once.Do(loadBackground)
	if background.n == 0 {
		return 1
	}
	df := background.df[term]
	return math.Log(float64(background.n+1)/float64(df+1)) / background.maxID
}

// WriteBackground counts the terms of sentences and writes the table
// Specificity reads, gzipped, deterministically; data names the corpus.
// Terms seen in fewer than minDF sentences are left out: to Specificity
// they are as rare as unknown ones.
func WriteBackground(w io.Writer, sentences []string, data string, minDF int) error {
	df := map[string]int{}
	for _, s := range sentences {
		seen := map[string]bool{}
		for _, t := range Terms(s) {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	keys := make([]string, 0, len(df))
	for k, n := range df {
		if n >= minDF {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(zw)
	fmt.Fprintf(bw, "#data\t%s\n#sentences\t%d\n", data, len(sentences))
	for _, k := range keys {
		fmt.Fprintf(bw, "%s\t%d\n", k, df[k])
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}
