package recall

import "time"

// Stages is where one recall's time went. A stage a recall did not run
// is zero; together they are about Response.Took.
type Stages struct {
	// Parse is validating the query and reading its text: hints, time
	// expressions, translations.
	Parse time.Duration `json:"parse_ns"`
	// Store is reading the store: a cache's load, catch-up and check of
	// its results, or a stateless recall's term statistics and
	// candidates.
	Store time.Duration `json:"store_ns"`
	// Keyword is the keyword side's search.
	Keyword time.Duration `json:"keyword_ns"`
	// Vector is embedding the query and searching the vector index (both
	// sides, for a stateless recall's one hybrid search).
	Vector time.Duration `json:"vector_ns"`
	// Fuse is building the candidate lists and fusing them.
	Fuse time.Duration `json:"fuse_ns"`
	// Relevance is judging each candidate's relevance to the query.
	Relevance time.Duration `json:"relevance_ns"`
	// Rerank is scoring, sorting and screening the candidates.
	Rerank time.Duration `json:"rerank_ns"`
	// Conflicts is marking results that contradict each other.
	Conflicts time.Duration `json:"conflicts_ns"`
	// Provenance is reading the results' source episodes.
	Provenance time.Duration `json:"provenance_ns"`
	// Render is writing the text block and counting the results as
	// recalled.
	Render time.Duration `json:"render_ns"`
}

// Add adds o's times to s.
func (s *Stages) Add(o Stages) {
	s.Parse += o.Parse
	s.Store += o.Store
	s.Keyword += o.Keyword
	s.Vector += o.Vector
	s.Fuse += o.Fuse
	s.Relevance += o.Relevance
	s.Rerank += o.Rerank
	s.Conflicts += o.Conflicts
	s.Provenance += o.Provenance
	s.Render += o.Render
}

// Named lists the stages in the order a recall runs them.
func (s Stages) Named() []NamedStage {
	return []NamedStage{{"parse", s.Parse}, {"store", s.Store}, {"keyword", s.Keyword}, {"vector", s.Vector},
		{"fuse", s.Fuse}, {"relevance", s.Relevance}, {"rerank", s.Rerank}, {"conflicts", s.Conflicts},
		{"provenance", s.Provenance}, {"render", s.Render}}
}

// NamedStage is one stage's time.
type NamedStage struct {
	Name string
	Took time.Duration
}

// stageClock times one recall's stages: lap gives the time since the last
// lap to a stage.
type stageClock struct {
	s    Stages
	last time.Time
}

func newStageClock() *stageClock { return &stageClock{last: time.Now()} }

func (c *stageClock) lap(stage *time.Duration) {
	now := time.Now()
	*stage += now.Sub(c.last)
	c.last = now
}
