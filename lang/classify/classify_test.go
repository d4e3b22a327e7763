package classify

import (
	"bytes"
	"os"
	"slices"
	"testing"

	"github.com/hindsight-memory/hindsight/lang"
)

func loadData(t *testing.T) []Example {
	t.Helper()
	xs, err := LoadData(os.DirFS("data"), ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(xs) < 5000 {
		t.Fatalf("%d labelled sentences, want thousands", len(xs))
	}
	return xs
}

// TestShippedModelsMatchTheirData fails when the labelled data changed
// without a retrain: the shipped models (and the background term
// statistics counted on the same data) record the hash of what they
// learned from. Retrain with `hindsight train classifiers`.
func TestShippedModelsMatchTheirData(t *testing.T) {
	xs := loadData(t)
	for _, r := range []Role{RoleUser, RoleAssistant} {
		m, err := For(r)
		if err != nil {
			t.Fatal(err)
		}
		rx := OfRole(xs, r)
		if m.Data != Hash(rx) || m.Examples != len(rx) {
			t.Errorf("%s model was trained on %s (%d examples); the data is %s (%d): retrain with `hindsight train classifiers`", r, m.Data, m.Examples, Hash(rx), len(rx))
		}
		if m.Features != FeatureVersion {
			t.Errorf("%s model has features %s, want %s", r, m.Features, FeatureVersion)
		}
	}
	if got := lang.BackgroundData(); got != Hash(xs) {
		t.Errorf("lang/background.gz was counted on %s, the data is %s: retrain with `hindsight train classifiers`", got, Hash(xs))
	}
}

// TestTrainingIsDeterministic retrains the assistant model and compares the
// bytes with the shipped file: the same data gives the same model.
func TestTrainingIsDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("retraining takes a few seconds")
	}
	rx := OfRole(loadData(t), RoleAssistant)
	a, err := Train(string(RoleAssistant), AssistantLabels, rx, TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := a.Encode(&got); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(ModelFile(RoleAssistant))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("retraining the assistant model gave %d bytes that differ from the shipped %d", got.Len(), len(want))
	}
}

// TestHeldOutQuality holds the models to floors on data they did not see:
// each data file is held out in turn and scored by a model trained on the
// rest (the way a new domain or phrasing arrives).
func TestHeldOutQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-validation trains a model per file")
	}
	xs := loadData(t)
	for _, c := range []struct {
		role       Role
		minP, minR float64
	}{
		{RoleUser, 0.82, 0.82},
		{RoleAssistant, 0.80, 0.70},
	} {
		r, err := CrossValidate(string(c.role), LabelsOf(c.role), OfRole(xs, c.role), 5, true, TrainOptions{Epochs: 10})
		if err != nil {
			t.Fatal(err)
		}
		p, rc := r.Kept()
		t.Logf("%s held out by file: worth keeping precision %.3f recall %.3f, accuracy %.3f", c.role, p, rc, r.Accuracy())
		if p < c.minP || rc < c.minR {
			t.Errorf("%s: worth keeping precision %.3f recall %.3f, want at least %.2f and %.2f", c.role, p, rc, c.minP, c.minR)
		}
	}
}

func TestFeaturesMaskValuesAndReadDiscourseApart(t *testing.T) {
	f := Features("No — our warehouse is ch-analytics.internal:8443, see https://wiki/x and --flag.", Later)
	for _, want := range []string{"u:⟨host⟩", "u:⟨url⟩", "u:⟨flag⟩", "lead", "cue:us", "p:later:our"} {
		if !slices.Contains(f, want) {
			t.Errorf("features lack %q: %v", want, f)
		}
	}
	for _, f := range f {
		if f == "u:analyt" || f == "u:8443" {
			t.Errorf("a value leaked into the words: %q", f)
		}
	}
	zh := Features("跟你说一下，以后日报改成 UTC。", Later)
	if !slices.Contains(zh, "lead:跟你说一下") || !slices.Contains(zh, "cue:change") || !slices.Contains(zh, "cc:日报") {
		t.Errorf("Chinese features %v", zh)
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	xs := []Example{{Text: "never push to main", Label: "rule"}, {Text: "thanks", Label: "none"}, {Text: "never deploy on fridays", Label: "rule"}, {Text: "ok thanks", Label: "none"}}
	m, err := Train("t", UserLabels, xs, TrainOptions{MinCount: 1, Epochs: 5})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := m.Encode(&b); err != nil {
		t.Fatal(err)
	}
	d, err := Decode(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "t" || d.Size() != m.Size() || d.Data != m.Data || d.Predict("never push", Later).Label != "rule" {
		t.Errorf("decoded %+v", d)
	}
	var again bytes.Buffer
	if err := m.Encode(&again); err != nil || !bytes.Equal(again.Bytes(), b.Bytes()) {
		t.Error("encoding twice gave different bytes")
	}
}
