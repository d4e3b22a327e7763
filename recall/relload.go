package recall

import (
	"bytes"
	"embed"
	"fmt"
	"sync"

	"github.com/hindsight-memory/hindsight/lang/lexicon"
	"github.com/hindsight-memory/hindsight/learn"
)

//go:generate go run ../cmd/hindsight train relevance --data data --out models

// RelevanceModelFile is where the shipped relevance model is kept.
const RelevanceModelFile = "models/relevance.model.gz"

//go:embed models
var relModelFiles embed.FS

var relModel struct {
	once  sync.Once
	model *learn.Model
	err   error
}

// relevanceModel returns the shipped relevance model, read once. It fails
// only if the file is missing or was trained on other features, which a
// test catches before release.
func relevanceModel() (*learn.Model, error) {
	relModel.once.Do(func() {
		data, err := relModelFiles.ReadFile(RelevanceModelFile)
		if err != nil {
			relModel.err = fmt.Errorf("relevance model: %w", err)
			return
		}
		m, err := learn.Decode(bytes.NewReader(data))
		if err != nil {
			relModel.err = err
			return
		}
		if m.Features != relFeatureVersion {
			relModel.err = fmt.Errorf("relevance model: trained on features %q, this build computes %q: retrain (hindsight train relevance)", m.Features, relFeatureVersion)
			return
		}
		relModel.model = m
	})
	return relModel.model, relModel.err
}

// RelevanceOptions are the options the relevance model is trained with.
func RelevanceOptions() learn.Options {
	return learn.Options{Epochs: 30, Rate: 0.1, L2: 1e-5, MinCount: 1, Bags: 3}
}

// relJudge gives one query's relevance to each candidate: the rule's and
// the learned model's (relevance), when the model is there, the
// dictionaries are, and recall is not told to use the rule alone
// (Config.RuleRelevance); else the rule's.
type relJudge struct {
	model *learn.Model
	q     *relQuery
	lx    *lexicon.Lexicon
}

// relevanceJudge prepares the judge of one query.
func (e *Engine) relevanceJudge(query string) relJudge {
	// The model was trained reading the dictionaries: without them its
	// features mean something else, and the rule judges alone.
	if e.cfg.RuleRelevance || e.deps.Lexicon == nil {
		return relJudge{}
	}
	m, err := relevanceModel()
	if err != nil {
		return relJudge{} // TestRelevanceModelShipped catches this
	}
	return relJudge{model: m, q: newRelQuery(query, e.deps.Lexicon), lx: e.deps.Lexicon}
}

// relevance is m's relevance to the query, given its rule relevance (the
// rule's, or, where the rule finds too little, what the model's
// probability maps to: modelRelevance), and the model's probability (0
// without evidence or without a model).
func (j relJudge) relevance(en *entry, rule float64) (float64, float64) {
	if j.model == nil {
		return rule, 0
	}
	f := j.q.features(en.units(j.lx), rule)
	if !relAsked(f) {
		return rule, 0
	}
	p := j.model.Score(f)
	if rule >= DefaultMinRelevance {
		return rule, p
	}
	return max(rule, modelRelevance(p, j.model.Threshold, DefaultMinRelevance)), p
}
