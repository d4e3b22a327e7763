package ledger_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
)

// escaping is text that JSON escapes at six bytes a character, the worst
// case for a payload's encoded size.
func escaping(n int) string { return strings.Repeat("<", n) }

// worstCandidate is the largest candidate a distillation can produce once
// clipped: every text at its limit, escaping-heavy, every entity and
// evidence ID there is room for.
func worstCandidate(i int) memory.Candidate {
	c := memory.Candidate{Kind: memory.KindLesson, Content: fmt.Sprint(i) + escaping(ledger.MaxContent),
		CounterExample: escaping(ledger.MaxCounterExample), TaskType: escaping(ledger.MaxTaskType), Scope: memory.ScopeShared}
	for j := range ledger.MaxEntities {
		c.Entities = append(c.Entities, fmt.Sprint(j)+escaping(ledger.MaxEntity-4))
	}
	for j := range ledger.MaxEvidence {
		c.Evidence = append(c.Evidence, fmt.Sprint("ev_", j, escaping(100)))
	}
	return ledger.ClipCandidate(c)
}

// worstMemory is the largest memory version a decision can write.
func worstMemory(c memory.Candidate, id string) memory.Memory {
	m := memory.Memory{ID: id, Tenant: "acme", Version: 9, Scope: c.Scope, Kind: c.Kind, Content: c.Content,
		CounterExample: c.CounterExample, TaskType: c.TaskType, Entities: c.Entities, Evidence: c.Evidence,
		Status: memory.StatusLive, Reason: escaping(500), Flags: []string{memory.FlagInstructionLike}}
	for j := range 64 {
		m.Sources = append(m.Sources, fmt.Sprint("ep_", j))
	}
	return m
}

// worstDecision is a conflict about c: the candidate, eight neighbours,
// and two versions before and after, all as large as they come.
func worstDecision(c memory.Candidate, id string) memory.Decision {
	d := memory.Decision{ID: id, Tenant: "acme", Action: memory.ActionMerge, Candidate: c, Verdict: memory.VerdictConflicts,
		Reason: escaping(1000), Before: []memory.Memory{worstMemory(c, "m1")}, After: []memory.Memory{worstMemory(c, "m1"), worstMemory(c, "m2")}}
	for j := range 8 {
		d.Neighbors = append(d.Neighbors, memory.ScoredCandidate{ID: fmt.Sprint("n", j), Content: c.Content, Similarity: 0.9})
	}
	return d
}

// memoryIDs are n IDs as the store makes them (forgets name those the
// Forget workflow resolved, never a caller's text).
func memoryIDs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = memory.MemoryID("acme", fmt.Sprint(i), "origin")
	}
	return out
}

// TestWorstRequestsFitTheirPayloads builds the largest request of each
// kind the ledger accepts, and the largest reply each can get, as many
// at once as a batch holds, in escaping-heavy text: every one encodes
// within its bound, and a batch's replies within ledger.MaxPayloadBytes,
// half of Temporal's 2 MiB limit.
func TestWorstRequestsFitTheirPayloads(t *testing.T) {
	const temporalLimit = 2 << 20
	ids := func(n, length int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprint(i) + escaping(length-len(fmt.Sprint(i)))
		}
		return out
	}
	merge := ledger.Request{ID: "merge/" + escaping(900), Tenant: "acme", Op: ledger.OpMerge, EpisodeID: escaping(memory.MaxID),
		WorkflowID: escaping(900), ReplyTo: escaping(900)}
	for i := range ledger.MaxCandidatesPerRequest {
		merge.Candidates = append(merge.Candidates, worstCandidate(i))
	}
	requests := map[ledger.Op]ledger.Request{
		ledger.OpMerge:    merge,
		ledger.OpStore:    {ID: "store/x", Tenant: "acme", Op: ledger.OpStore, Candidates: []memory.Candidate{worstCandidate(0)}},
		ledger.OpCorrect:  {ID: "correct/x", Tenant: "acme", Op: ledger.OpCorrect, MemoryIDs: ids(1, memory.MaxID), Content: escaping(ledger.MaxContent)},
		ledger.OpFeedback: {ID: "feedback/x", Tenant: "acme", Op: ledger.OpFeedback, MemoryIDs: ids(ledger.MaxFeedbackMemories, memory.MaxID), Helped: true},
		ledger.OpRelease:  {ID: "release/x", Tenant: "acme", Op: ledger.OpRelease, MemoryIDs: ids(1, memory.MaxID), Reason: escaping(ledger.MaxReason)},
		ledger.OpUndo:     {ID: "undo/x", Tenant: "acme", Op: ledger.OpUndo, DecisionID: escaping(memory.MaxID)},
		ledger.OpForget: {ID: "forget/x", Tenant: "acme", Op: ledger.OpForget, MemoryIDs: memoryIDs(ledger.MaxForgetIDs * 3 / 4),
			Rebuild: memoryIDs(ledger.MaxForgetIDs / 4), DropSources: memoryIDs(10000)},
		ledger.OpDecay: {ID: "decay/x", Tenant: "acme", Op: ledger.OpDecay},
	}
	for op, req := range requests {
		if err := req.Validate(); err != nil {
			t.Fatalf("%s: the largest valid request is refused: %v", op, err)
		}
		if n := ledger.EncodedSize(req); n > ledger.MaxRequestBytes {
			t.Fatalf("%s: the request encodes to %d bytes, past MaxRequestBytes %d", op, n, ledger.MaxRequestBytes)
		}
		// The largest reply: a decision per candidate or memory named, or
		// a forget's receipt listing everything it named.
		reply := ledger.Reply{RequestID: req.ID}
		n := map[ledger.Op]int{ledger.OpUndo: 1, ledger.OpForget: len(req.Rebuild), ledger.OpDecay: 0}[op]
		if n == 0 && op != ledger.OpDecay {
			n = max(len(req.Candidates), len(req.MemoryIDs))
		}
		for i := range n {
			reply.Decisions = append(reply.Decisions, worstDecision(worstCandidate(i), fmt.Sprint("dec_", i)))
		}
		if op == ledger.OpForget {
			reply.Forgotten = &ledger.ForgetReceipt{Memories: req.MemoryIDs, Private: req.MemoryIDs, Rebuilt: req.Rebuild, Episodes: req.DropSources}
		}
		// A batch of as many such requests as an update or a merge batch
		// holds.
		items := max(1, len(req.Candidates)+len(req.MemoryIDs)+len(req.Rebuild))
		batch := make([]ledger.Reply, min(ledger.MaxCandidatesPerRequest, max(1, ledger.MaxBatchItems/items)))
		reqs := make([]ledger.Request, len(batch))
		for i := range batch {
			batch[i], reqs[i] = reply, req
		}
		if err := ledger.ValidateBatch("acme", reqs); err != nil {
			t.Fatalf("%s: a batch of %d is refused: %v", op, len(reqs), err)
		}
		if err := ledger.ValidateBatch("acme", append(reqs, reqs...)); err == nil && items*2*len(reqs) > ledger.MaxBatchItems {
			t.Fatalf("%s: a batch of %d past MaxBatchItems is accepted", op, 2*len(reqs))
		}
		fitted := ledger.Fit(batch, ledger.MaxPayloadBytes)
		if got := ledger.EncodedSize(fitted); got > ledger.MaxPayloadBytes {
			t.Errorf("%s: %d of the largest replies encode to %d bytes after Fit, past %d", op, len(batch), got, ledger.MaxPayloadBytes)
		}
		one := ledger.Fit([]ledger.Reply{reply}, ledger.MaxPayloadBytes)
		if got := ledger.EncodedSize(one); got > ledger.MaxPayloadBytes {
			t.Errorf("%s: the largest reply encodes to %d bytes after Fit", op, got)
		}
		t.Logf("%-8s request %7d bytes; largest reply %8d bytes raw, %7d fitted; %d of them %7d fitted (limit %d)",
			op, ledger.EncodedSize(req), ledger.EncodedSize(reply), ledger.EncodedSize(one), len(batch), ledger.EncodedSize(fitted), temporalLimit)
	}
}

// TestRequestsPastTheirLimitsAreRefused names the field and the limit for
// every identifier and text a request carries, quoting a short, escaped
// prefix of what it refuses.
func TestRequestsPastTheirLimitsAreRefused(t *testing.T) {
	huge := strings.Repeat("a", 1<<20)
	for name, c := range map[string]struct {
		req   ledger.Request
		field string
	}{
		"feedback id":       {ledger.Request{ID: "f", Tenant: "acme", Op: ledger.OpFeedback, MemoryIDs: []string{huge}}, "memory_ids[0]"},
		"correct id":        {ledger.Request{ID: "c", Tenant: "acme", Op: ledger.OpCorrect, MemoryIDs: []string{huge}, Content: "x"}, "memory_ids[0]"},
		"control bytes":     {ledger.Request{ID: "c", Tenant: "acme", Op: ledger.OpCorrect, MemoryIDs: []string{"m\x00\x1b[2J"}, Content: "x"}, "memory_ids[0]"},
		"request id":        {ledger.Request{ID: huge, Tenant: "acme", Op: ledger.OpDecay}, "id"},
		"decision id":       {ledger.Request{ID: "u", Tenant: "acme", Op: ledger.OpUndo, DecisionID: huge}, "decision_id"},
		"release reason":    {ledger.Request{ID: "r", Tenant: "acme", Op: ledger.OpRelease, MemoryIDs: []string{"m"}, Reason: huge}, "reason"},
		"correct content":   {ledger.Request{ID: "c", Tenant: "acme", Op: ledger.OpCorrect, MemoryIDs: []string{"m"}, Content: huge}, "content"},
		"forget too many":   {ledger.Request{ID: "f", Tenant: "acme", Op: ledger.OpForget, MemoryIDs: make([]string, ledger.MaxForgetIDs+1)}, "memory_ids"},
		"store escaping":    {ledger.Request{ID: "s", Tenant: "acme", Op: ledger.OpStore, Candidates: []memory.Candidate{{Kind: memory.KindFact, Content: escaping(ledger.MaxContent), CounterExample: escaping(ledger.MaxCounterExample)}}}, "limit"},
		"store task type":   {ledger.Request{ID: "s", Tenant: "acme", Op: ledger.OpStore, Candidates: []memory.Candidate{{Kind: memory.KindFact, Content: "x", TaskType: "a\nb"}}}, "task_type"},
		"episode id":        {ledger.Request{ID: "m", Tenant: "acme", Op: ledger.OpMerge, EpisodeID: huge, Candidates: []memory.Candidate{{Kind: memory.KindFact, Content: "x"}}}, "episode_id"},
		"unknown op":        {ledger.Request{ID: "x", Tenant: "acme", Op: ledger.Op(huge)}, "unknown op"},
		"tenant":            {ledger.Request{ID: "x", Tenant: huge, Op: ledger.OpDecay}, "tenant"},
		"feedback too many": {ledger.Request{ID: "f", Tenant: "acme", Op: ledger.OpFeedback, MemoryIDs: make([]string, ledger.MaxFeedbackMemories+1)}, "limit"},
	} {
		err := c.req.Validate()
		msg := memory.ErrorMessage(err)
		switch {
		case !memory.IsInvalid(err):
			t.Errorf("%s: not refused as invalid: %v", name, err)
		case !strings.Contains(msg, c.field):
			t.Errorf("%s: the error does not name %s: %s", name, c.field, msg)
		case len(msg) > 400:
			t.Errorf("%s: the error is %d bytes long: it must quote a short prefix only", name, len(msg))
		case strings.ContainsAny(msg, "\x00\x1b"):
			t.Errorf("%s: the error holds raw control bytes: %q", name, msg)
		}
	}
}

// TestRepliesKeepNoLongErrors cuts the error a reply carries, and the one
// a carried reply keeps, whatever the failure quoted.
func TestRepliesKeepNoLongErrors(t *testing.T) {
	r := ledger.Reply{RequestID: "r"}.Failed(memory.ENOTFOUND, "memory "+strings.Repeat("<\x00", 1<<19)+" not found")
	if len(r.Error) > ledger.MaxErrorBytes || strings.ContainsRune(r.Error, 0) {
		t.Fatalf("a failed reply keeps %d bytes of error (control bytes: %v)", len(r.Error), strings.ContainsRune(r.Error, 0))
	}
	if c := ledger.Carry(r); len(c.Error) > 256 {
		t.Fatalf("a carried reply keeps %d bytes of error", len(c.Error))
	}
}

// TestClippedCandidatesFitWhateverTheyHold clips distilled candidates of
// every escaping-heavy shape into MaxCandidateBytes, and ValidateCandidate
// accepts what ClipCandidate makes.
func TestClippedCandidatesFitWhateverTheyHold(t *testing.T) {
	for name, c := range map[string]memory.Candidate{
		"markup":     {Kind: memory.KindLesson, Content: escaping(10000), CounterExample: escaping(10000)},
		"controls":   {Kind: memory.KindLesson, Content: strings.Repeat("\x01", 5000)},
		"entities":   {Kind: memory.KindFact, Content: "x", Entities: strings.Split(strings.Repeat(escaping(199)+",", 40), ",")},
		"worst case": worstCandidate(7),
	} {
		clipped := ledger.ClipCandidate(c)
		if n := ledger.EncodedSize(clipped); n > ledger.MaxCandidateBytes {
			t.Errorf("%s: clipped to %d bytes encoded, past %d", name, n, ledger.MaxCandidateBytes)
		}
	}
}
