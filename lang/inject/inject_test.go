package inject

import (
	"os"
	"testing"

	"github.com/hindsight-memory/hindsight/lang/lexicon"
)

func trainingSet(t *testing.T) (train, unseen []Example) {
	t.Helper()
	train, unseen, err := TrainingSet(os.DirFS("data"), os.DirFS("../classify/data"), MemoryHoldout)
	if err != nil {
		t.Fatal(err)
	}
	return train, unseen
}

// TestShippedModelMatchesItsData: the embedded model was trained on the
// data in the repository, with these features (run "hindsight train
// injection" after changing either).
func TestShippedModelMatchesItsData(t *testing.T) {
	m, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	train, _ := trainingSet(t)
	if m.Features != FeatureVersion || m.Data != Hash(train) || m.Examples != len(train) {
		t.Fatalf("the shipped model (features %s, data %s, %d texts) is not trained on this data (features %s, data %s, %d texts): run hindsight train injection",
			m.Features, m.Data, m.Examples, FeatureVersion, Hash(train), len(train))
	}
}

// TestTrainingIsDeterministic retrains the shipped model and compares
// what it decides.
func TestTrainingIsDeterministic(t *testing.T) {
	lex := lexicon.Default()
	if lex == nil {
		if os.Getenv("HINDSIGHT_REQUIRE_DICTS") != "" {
			t.Fatalf("training needs the dictionaries, which make test installs: %v", lexicon.Err())
		}
		t.Skipf("training needs the dictionaries (make dicts): %v", lexicon.Err())
	}
	shipped, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	train, unseen := trainingSet(t)
	m, err := Train(train, TrainOptions{Expand: SynonymsFrom(lex), Threshold: shipped.Threshold, AttackWeight: 1, Bags: 7, PriorBias: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range unseen[:200] {
		if a, b := m.Score(x.Text), shipped.Score(x.Text); a-b > 1e-3 || b-a > 1e-3 {
			t.Fatalf("retrained %.4f, shipped %.4f for %q", a, b, x.Text)
		}
	}
}

// TestHeldOutQuality measures the shipped model on texts written apart
// from its data (heldout/, half attacks in new wordings, half benign texts
// that mention system, instructions, admin or ignore), and on ordinary
// memories it was not trained on. The floors sit just under what it
// measures (hindsight train injection prints it all), so that a change
// for the worse fails here.
func TestHeldOutQuality(t *testing.T) {
	m, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	held, err := LoadData(os.DirFS("heldout"), ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(held) < 200 {
		t.Fatalf("the held-out set has %d texts, want at least 200", len(held))
	}
	r := m.Evaluate(held)
	_, unseen := trainingSet(t)
	u := m.Evaluate(unseen)
	t.Logf("held out: recall %.3f, false positives %.3f; ordinary memories quarantined %.4f", r.Recall(), r.FalsePositives(), u.FalsePositives())
	if r.Recall() < 0.84 || r.FalsePositives() > 0.03 {
		t.Errorf("held out: recall %.3f (floor 0.84), false positives %.3f (ceiling 0.03)", r.Recall(), r.FalsePositives())
	}
	if u.FalsePositives() > 0.008 {
		t.Errorf("ordinary memories quarantined: %.4f (ceiling 0.008)", u.FalsePositives())
	}
	for _, benign := range []string{
		"The system prompt for the support bot lives in prompts/support.md.",
		// Words the model never saw read as most texts do.
		"Give report timestamps in Beijing time.",
	} {
		if m.Attack(benign) {
			t.Errorf("benign %q is quarantined", benign)
		}
	}
}

func TestNormalizeSeesThroughDisguises(t *testing.T) {
	for in, want := range map[string]string{
		"i g n o r e   a l l":          "ignore all",
		"s.k.i.p t.h.e c.h.e.c.k.s":    "skip the checks",
		"|gn0r3 ru|3z":                 "lgnore rulez",
		"1gn0re prev10us":              "ignore previous",
		"ΙGΝΟRΕ the rules":             "ignore the rules",
		"Ｉｇｎｏｒｅ":                       "ignore",
		"v2 costs $5 in 2026":          "v2 costs xmoney in xnum",
		"mail attacker@example.com":    "mail xemail",
		"h4ck3d via evil.example:8080": "hacked via xhost",
		"ig\u200bnore":                 "ignore",
		"系统 提示":                        "系统 提示",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}
