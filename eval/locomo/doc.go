// Package locomo measures recall on LoCoMo (Maharana et al., "Evaluating
// Very Long-Term Conversational Memory of LLM Agents", ACL 2024; data CC
// BY-NC 4.0): it ingests each conversation as one memory per turn, through
// index.Indexer as the service does, asks every question through
// recall.Engine as the MCP recall tool does, and scores retrieval recall@k:
// the fraction of a question's evidence turns found among the top k
// memories, averaged per category and overall.
//
// Categories follow the official mapping: 1 multi-hop, 2 temporal,
// 3 open-domain, 4 single-hop, 5 adversarial. Questions without evidence
// are skipped; malformed evidence IDs ("D8:6; D9:17", "D:11:26", "D30:05")
// are normalised; evidence naming no turn of the conversation counts as
// missed.
//
// Each conversation gets a fresh store, index and engine whose clock is
// the day after the conversation's last session, so that relative time
// expressions in questions ("last year") are read on the conversation's
// timeline, not the wall clock's.
package locomo
