package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/runes"
)

// Defaults of an Extractor.
const (
	DefaultTokenBudget   = 12000 // prompt tokens for the transcript itself
	DefaultFieldLimit    = 2000  // characters per event field before clipping
	DefaultMaxTokens     = 4096  // completion tokens
	DefaultMaxCandidates = 12
)

// Output limits: longer text is clipped, so that one verbose answer cannot
// bloat the stores.
const (
	maxTaskRunes     = 300
	maxContentRunes  = 400
	maxStepRunes     = 200
	maxFailureRunes  = 300
	maxFeedbackRunes = 300
	maxEntityRunes   = 64
	maxEntities      = 12
	maxSteps         = 15
	maxFailures      = 10
	maxFeedback      = 5
	minContentRunes  = 8
)

// Extractor is a memory.Extractor backed by a language model.
type Extractor struct {
	model         memory.LLM
	tokenBudget   int
	fieldLimit    int
	maxTokens     int
	maxCandidates int
	chatter       func(memory.Transcript, int) bool
	fallback      memory.Extractor
	nothing       func(memory.Transcript) bool
	log           *slog.Logger
}

var _ memory.Extractor = (*Extractor)(nil)

// Option configures an Extractor.
type Option func(*Extractor)

// WithTokenBudget sets how many prompt tokens the transcript may take
// (estimated by EstimateTokens); longer transcripts are shortened.
func WithTokenBudget(tokens int) Option { return func(x *Extractor) { x.tokenBudget = tokens } }

// WithFieldLimit sets the characters one event field keeps before it is
// clipped in the middle.
func WithFieldLimit(chars int) Option { return func(x *Extractor) { x.fieldLimit = chars } }

// WithMaxTokens sets the completion token limit.
func WithMaxTokens(tokens int) Option { return func(x *Extractor) { x.maxTokens = tokens } }

// WithMaxCandidates caps the candidate memories kept from one session.
func WithMaxCandidates(n int) Option { return func(x *Extractor) { x.maxCandidates = n } }

// WithChatter leaves out of the prompt the events for which chatter
// reports true: messages that hold nothing to learn ("thanks", "on it").
// The offline classifiers know them (see lang/classify.Chatter), so the
// model is not paid to read them.
func WithChatter(chatter func(t memory.Transcript, i int) bool) Option {
	return func(x *Extractor) { x.chatter = chatter }
}

// WithoutModelWhen extracts sessions for which nothing reports true with
// fallback instead of the model: sessions that hold nothing to learn (no
// failure, no statement, no finding, by the offline classifiers; see
// offline.NothingToLearn) still become episodes, without a model call.
func WithoutModelWhen(nothing func(memory.Transcript) bool, fallback memory.Extractor) Option {
	return func(x *Extractor) { x.nothing, x.fallback = nothing, fallback }
}

// WithLogger logs dropped candidates and truncations (default: discard).
func WithLogger(l *slog.Logger) Option { return func(x *Extractor) { x.log = l } }

// NewExtractor returns an extractor that asks model (at memory.StageExtract)
// for a strict JSON answer.
func NewExtractor(model memory.LLM, opts ...Option) *Extractor {
	x := &Extractor{
		model:         model,
		tokenBudget:   DefaultTokenBudget,
		fieldLimit:    DefaultFieldLimit,
		maxTokens:     DefaultMaxTokens,
		maxCandidates: DefaultMaxCandidates,
		log:           slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	for _, o := range opts {
		o(x)
	}
	x.tokenBudget = max(x.tokenBudget, 500)
	x.fieldLimit = max(x.fieldLimit, minFieldLimit)
	x.maxCandidates = max(x.maxCandidates, 1)
	return x
}

// Dropped is a candidate the model proposed that validation rejected.
type Dropped struct {
	Index   int    `json:"index"` // position in the model's list
	Kind    string `json:"kind"`
	Content string `json:"content"`
	Reason  string `json:"reason"`
}

// Report is an extraction with what validation and truncation did to get
// there.
type Report struct {
	Extraction memory.Extraction
	Dropped    []Dropped
	Truncation Truncation
	Prompt     memory.ChatRequest // the request sent, for debugging and replay
}

// Extract distils t. It expects a normalised transcript (see
// memory.Transcript.Normalize) so that events carry IDs for evidence.
func (x *Extractor) Extract(ctx context.Context, t memory.Transcript) (memory.Extraction, error) {
	r, err := x.ExtractReport(ctx, t)
	return r.Extraction, err
}

// ExtractReport is Extract with the details: dropped candidates with their
// reasons, the truncation applied and the request sent.
func (x *Extractor) ExtractReport(ctx context.Context, t memory.Transcript) (Report, error) {
	const op = "llm: extract"
	if len(t.Events) == 0 {
		return Report{}, memory.Invalidf(op, "session %s has no events", t.SessionID)
	}
	if x.nothing != nil && x.fallback != nil && x.nothing(t) {
		ext, err := x.fallback.Extract(ctx, t)
		if err != nil {
			return Report{}, fmt.Errorf("%s: session %s: %w", op, t.SessionID, err)
		}
		x.log.Info("nothing to learn: extracted without the model", "session", t.SessionID)
		return Report{Extraction: ext}, nil
	}
	rendered, cut := renderTranscript(t, x.tokenBudget, x.fieldLimit, x.chatter)
	if note := cut.Note(); note != "" {
		x.log.Info("transcript shortened for extraction", "session", t.SessionID, "omitted", len(cut.Omitted), "clipped_fields", cut.ClippedFields, "hard_cut", cut.HardCut)
	}
	req := memory.ChatRequest{
		Stage:       memory.StageExtract,
		System:      systemPrompt(x.maxCandidates),
		User:        userPrompt(t, rendered, cut),
		SchemaName:  SchemaName,
		Schema:      extractionSchema,
		Temperature: 0,
		MaxTokens:   x.maxTokens,
	}
	resp, err := x.model.Chat(ctx, req)
	if err != nil {
		return Report{Truncation: cut, Prompt: req}, fmt.Errorf("%s: session %s: %w", op, t.SessionID, err)
	}
	var out answer
	if err := json.Unmarshal([]byte(resp.Content), &out); err != nil {
		return Report{Truncation: cut, Prompt: req}, fmt.Errorf("%s: session %s: model %s answered JSON that does not match the extraction schema: %w", op, t.SessionID, resp.Model, err)
	}
	ext, dropped := x.validate(t, out)
	ext.Model = resp.Model
	ext.Usage = resp.Usage
	ext.Episode.Extractor = resp.Model
	for _, d := range dropped {
		x.log.Info("dropped candidate", "session", t.SessionID, "index", d.Index, "kind", d.Kind, "reason", d.Reason)
	}
	return Report{Extraction: ext, Dropped: dropped, Truncation: cut, Prompt: req}, nil
}

// answer is the model's JSON. Decoding is lenient about what strict mode
// cannot guarantee on every server (json_object fallback): missing fields
// are empty, seq numbers may come as strings.
type answer struct {
	Task     string   `json:"task"`
	TaskType string   `json:"task_type"`
	Entities []string `json:"entities"`
	Steps    []string `json:"steps"`
	Failures []struct {
		Attempt  string  `json:"attempt"`
		Cause    string  `json:"cause"`
		Evidence seqList `json:"evidence"`
	} `json:"failures"`
	Outcome    string   `json:"outcome"`
	Feedback   []string `json:"feedback"`
	Candidates []struct {
		Kind           string   `json:"kind"`
		About          string   `json:"about"`
		Content        string   `json:"content"`
		CounterExample string   `json:"counter_example"`
		TaskType       string   `json:"task_type"`
		Entities       []string `json:"entities"`
		Evidence       seqList  `json:"evidence"`
	} `json:"candidates"`
}

// seqList accepts [3, "4", "[5]"]: models sometimes quote numbers or copy
// the transcript's brackets.
type seqList []int

func (s *seqList) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for _, r := range raw {
		var n int
		if json.Unmarshal(r, &n) == nil {
			*s = append(*s, n)
			continue
		}
		var str string
		if json.Unmarshal(r, &str) == nil {
			if n, err := strconv.Atoi(strings.Trim(str, "[] ")); err == nil {
				*s = append(*s, n)
			}
		}
	}
	return nil
}

// validate turns the model's answer into an extraction, clamping lengths
// and dropping candidates that fail the quality and provenance checks.
func (x *Extractor) validate(t memory.Transcript, a answer) (memory.Extraction, []Dropped) {
	ep := memory.Episode{
		Tenant:     t.Tenant,
		SessionID:  t.SessionID,
		UserID:     t.UserID,
		Agent:      t.Agent,
		StartedAt:  t.StartedAt,
		EndedAt:    t.EndedAt,
		EventCount: len(t.Events),
	}
	ep.Task = runes.ClipWords(runes.OneLine(a.Task), maxTaskRunes)
	if ep.Task == "" {
		ep.Task = runes.ClipWords(runes.OneLine(fallbackTask(t)), maxTaskRunes)
	}
	ep.TaskType = a.TaskType
	if !ValidTaskType(ep.TaskType) {
		ep.TaskType = TaskOther
	}
	ep.Entities = normEntities(a.Entities, maxEntities)
	for _, s := range a.Steps {
		if s = runes.ClipWords(runes.OneLine(s), maxStepRunes); s != "" && len(ep.Steps) < maxSteps {
			ep.Steps = append(ep.Steps, s)
		}
	}
	for _, f := range a.Failures {
		attempt := runes.ClipWords(runes.OneLine(f.Attempt), maxFailureRunes)
		if attempt == "" || len(ep.Failures) >= maxFailures {
			continue
		}
		fl := memory.Failure{Attempt: attempt, Cause: runes.ClipWords(runes.OneLine(f.Cause), maxFailureRunes)}
		if ids := eventIDs(t, f.Evidence); len(ids) > 0 {
			fl.EventID = ids[0]
		}
		ep.Failures = append(ep.Failures, fl)
	}
	ep.Outcome = memory.Outcome(a.Outcome)
	switch {
	case t.Outcome != "" && t.Outcome != memory.OutcomeUnknown:
		ep.Outcome = t.Outcome // the platform knows better than a guess
	case ep.Outcome != memory.OutcomeSuccess && ep.Outcome != memory.OutcomePartial && ep.Outcome != memory.OutcomeFailure:
		ep.Outcome = memory.OutcomeUnknown
	}
	for _, f := range a.Feedback {
		if f = runes.ClipWords(runes.OneLine(f), maxFeedbackRunes); f != "" && len(ep.Feedback) < maxFeedback {
			ep.Feedback = append(ep.Feedback, f)
		}
	}

	var cands []memory.Candidate
	var dropped []Dropped
	seen := map[string]bool{}
	for i, c := range a.Candidates {
		drop := func(reason string) {
			dropped = append(dropped, Dropped{Index: i, Kind: c.Kind, Content: runes.ClipWords(c.Content, 120), Reason: reason})
		}
		kind := memory.Kind(strings.ToLower(strings.TrimSpace(c.Kind)))
		content := runes.ClipWords(runes.OneLine(c.Content), maxContentRunes)
		switch {
		case !kind.Valid():
			drop(fmt.Sprintf("kind %q is not preference, rule, lesson or fact", c.Kind))
			continue
		case len([]rune(content)) < minContentRunes:
			drop("content is empty or too short to act on")
			continue
		case kind == memory.KindLesson && !concrete(content):
			drop("lesson is vague: it names no concrete parameter, value, command or file")
			continue
		}
		evidence := eventIDs(t, c.Evidence)
		if len(evidence) == 0 {
			drop("no evidence: it cites no event of this session")
			continue
		}
		if kind != memory.KindLesson && !citesUser(t, c.Evidence) {
			drop(fmt.Sprintf("a %s must be stated by the user, but its evidence cites no user message", kind))
			continue
		}
		key := memory.ContentHash(kind, content)
		if seen[key] {
			drop("duplicate of an earlier candidate")
			continue
		}
		if len(cands) >= x.maxCandidates {
			drop(fmt.Sprintf("over the limit of %d candidates", x.maxCandidates))
			continue
		}
		seen[key] = true
		taskType := c.TaskType
		if taskType != "" && !ValidTaskType(taskType) {
			taskType = ""
		}
		cands = append(cands, memory.Candidate{
			Kind:           kind,
			Content:        content,
			CounterExample: runes.ClipWords(runes.OneLine(c.CounterExample), maxContentRunes),
			TaskType:       taskType,
			Entities:       normEntities(c.Entities, 6),
			Evidence:       evidence,
			About:          aboutOf(kind, c.About, content),
		})
	}
	return memory.Extraction{Episode: ep, Candidates: cands}, dropped
}

// eventIDs maps seq numbers to event IDs, skipping numbers outside the
// transcript and repeats, in the order given.
func eventIDs(t memory.Transcript, seqs []int) []string {
	var ids []string
	seen := map[int]bool{}
	for _, s := range seqs {
		if s < 0 || s >= len(t.Events) || seen[s] {
			continue
		}
		seen[s] = true
		id := t.Events[s].ID
		if id == "" && t.Tenant != "" && t.SessionID != "" {
			id = memory.EventID(t.Tenant, t.SessionID, s)
		}
		if id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

func citesUser(t memory.Transcript, seqs []int) bool {
	for _, s := range seqs {
		if s >= 0 && s < len(t.Events) && t.Events[s].Role == memory.RoleUser {
			return true
		}
	}
	return false
}

// concreteRE finds what makes a lesson actionable: a value, a quoted or
// code term, a parameter, a flag, a path or file, a version, a name with
// capitals inside (ClickHouse), or Latin terms inside Chinese text.
var concreteRE = regexp.MustCompile("[0-9]|[`'\"“”‘’「」=]|--?[a-zA-Z]|\\w+\\.\\w+|/\\w|\\b[a-z]+[A-Z]\\w*|\\b[A-Z][a-z]+[A-Z]\\w*|\\b[A-Z]{2,}\\b|\\p{Han}\\s*[A-Za-z]{2,}|[A-Za-z]{2,}\\s*\\p{Han}")

func concrete(s string) bool { return concreteRE.MatchString(s) }

func normEntities(in []string, limit int) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range in {
		n := memory.NormalizeEntity(e)
		if n == "" || len([]rune(n)) > maxEntityRunes || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, n)
		if len(out) == limit {
			break
		}
	}
	return out
}

// fallbackTask is the platform's task or the first user message.
func fallbackTask(t memory.Transcript) string {
	if t.Task != "" {
		return t.Task
	}
	for _, e := range t.Events {
		if e.Role == memory.RoleUser && strings.TrimSpace(e.Content) != "" {
			return e.Content
		}
	}
	return ""
}

// aboutOf is whom a candidate is about: what the model said, or, when it
// said nothing usable, what the offline rule reads from the wording.
// Lessons are about the work whatever the model said.
func aboutOf(kind memory.Kind, said, content string) memory.About {
	switch a := memory.About(strings.ToLower(strings.TrimSpace(said))); {
	case kind == memory.KindLesson:
		return memory.AboutWork
	case a == memory.AboutUser || a == memory.AboutWork:
		return a
	}
	return About(kind, content)
}
