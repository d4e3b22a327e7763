// Package merge decides how a candidate memory joins what Hindsight already
// knows: the judges and their evaluation. Package plan turns their
// verdicts, and every other change, into decisions.
//
// Merging a candidate, as the Merge activities run it:
//
//  1. Normalise and look the candidate up by exact content hash
//     (memory.ContentHash): a hit is a duplicate, no judge is asked.
//  2. Search the vector index for live memories of the same tenant and
//     kind, and keep those above the threshold with Prefilter
//     (DefaultThreshold for neural embeddings, OfflineThreshold for the
//     offline lexical embedder).
//  3. Ask a judge for one verdict (memory.Judge): the LLMJudge (strict JSON
//     schema, PromptVersion) when a model is configured, else the
//     deterministic OfflineJudge, which reads English and Chinese and never
//     merges when unsure.
//  4. Plan the change with plan.Merge, check it with plan.VerifyCurrent against
//     the current versions (the optimistic check that serialises
//     concurrent merges into one memory), log the decision (Before, After,
//     verdict, reason, judge, model, prompt version, workflow ID; the log
//     keeps the first write of an ID), then write its After versions.
//     Logging first keeps undo possible whatever fails next: a retried
//     activity that finds its decision ID already logged rewrites that
//     decision's After versions (writes are idempotent) instead of judging
//     again, since a model may answer differently the second time.
//
// Conflicts reports whether two memories contradict each other by the
// offline rules; recall uses it to flag contradictions.
//
// Evaluate measures a judge on a labelled set (testdata/merge/pairs.jsonl,
// loaded with LoadPairs): per-verdict precision and recall, a confusion
// matrix, accuracy and every mistake. ScorePairs and SuggestThreshold
// calibrate the pre-filter threshold for an embedder on the same set.
package merge
