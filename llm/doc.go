// Package llm distils session transcripts with a language model: an
// Extractor (memory.Extractor) that renders a transcript into a prompt
// within a token budget, asks any memory.LLM for a strict JSON-schema
// answer, and validates what comes back before it becomes an episode and
// candidate memories.
//
// AskJSON asks for a strict JSON answer, checks it and asks again with
// what was wrong, counting the tokens of every call; the merge judge and
// the consolidation summariser share it.
//
// It also owns the task-type taxonomy shared by every extractor (TaskTypes),
// so that episodes distilled by the LLM and by the offline rules
// (llm/offline) file under the same names.
//
// The client for OpenAI-compatible servers is in llm/openai; the
// deterministic, LLM-free extractor and embedder are in llm/offline.
package llm
