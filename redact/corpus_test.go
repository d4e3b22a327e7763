package redact

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestLabelledCorpus measures secret detection on testdata/secrets/
// labelled.jsonl (the corpus the detectors were developed against) and
// heldout.jsonl (written apart, in other formats and domains): lines from agent transcripts, about half holding a
// secret (with the exact value that must be hidden) and half look-alikes
// that must be left alone (UUIDs, git SHAs, lockfile hashes, base64
// images, placeholders, public keys, documented example keys). A secret
// line counts as found when its value no longer appears; a look-alike
// counts as a false alarm when anything in it is replaced. Personal data
// is kept here, so that only secrets are measured.
//
// Only the development corpus prints its misses and false alarms; a
// held-out corpus prints its scores alone, so that no one changing the
// detectors reads what it holds.
func TestLabelledCorpus(t *testing.T) {
	for _, c := range []struct {
		file             string
		minP, minR, maxF float64 // precision, recall, false positives
		heldOut          bool
	}{
		{"labelled.jsonl", 0.95, 0.90, 1, false},
		// Written independently and scored once, never tuned on: 0.978
		// precision and 0.854 recall when it was added.
		{"heldout.jsonl", 0.95, 0.80, 1, true},
		// Written in one sitting before the detectors were next changed
		// (issue 37), committed apart, and scored once after.
		{"heldout3.jsonl", 0.95, 0.90, 0.03, true},
	} {
		t.Run(c.file, func(t *testing.T) { scoreCorpus(t, "../testdata/secrets/"+c.file, c.minP, c.minR, c.maxF, c.heldOut) })
	}
}

func scoreCorpus(t *testing.T, path string, minP, minR, maxF float64, heldOut bool) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keepAll := Policy{ClassEmail: Keep, ClassPhone: Keep, ClassAddress: Keep, ClassCard: Keep, ClassNationalID: Keep, ClassIP: Keep}
	r := New(testKey, keepAll)
	var tp, fn, fp, tn int
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		var x struct {
			Text        string `json:"text"`
			Secret      bool   `json:"secret"`
			Kind        string `json:"kind"`
			SecretValue string `json:"secret_value"`
		}
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		got := r.String(x.Text)
		switch {
		case x.Secret && !strings.Contains(got, x.SecretValue):
			tp++
		case x.Secret:
			fn++
			if !heldOut {
				t.Logf("missed %s (line %d): %s", x.Kind, line, x.Text)
			}
		case got != x.Text:
			fp++
			if !heldOut {
				t.Logf("false alarm on %s (line %d): %s → %s", x.Kind, line, x.Text, got)
			}
		default:
			tn++
		}
	}
	p, rc := float64(tp)/float64(tp+fp), float64(tp)/float64(tp+fn)
	fpr := float64(fp) / float64(fp+tn)
	t.Logf("%d secret lines, %d look-alikes: precision %.3f, recall %.3f, false positives %.3f (%d found, %d missed, %d false alarms)", tp+fn, fp+tn, p, rc, fpr, tp, fn, fp)
	if tp+fn < 100 || fp+tn < 100 {
		t.Fatalf("the corpus has %d secrets and %d look-alikes; want at least 100 of each", tp+fn, fp+tn)
	}
	if p < minP || rc < minR || fpr > maxF {
		t.Errorf("precision %.3f, recall %.3f, false positives %.3f; want at least %.2f and %.2f, at most %.2f", p, rc, fpr, minP, minR, maxF)
	}
}
