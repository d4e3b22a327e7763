// Package workflows holds Hindsight's Temporal workflows: deterministic
// orchestration only. Every side effect is an activity (package activities);
// workflows use workflow.Now, never range over maps for decisions, and pass
// large data by reference (a session is named by tenant and session ID, its
// events stay in the episodic store).
//
//   - SessionEnd distils one finished session into an episode and candidate
//     memories, then hands the candidates to the tenant's ledger.
//   - MemoryLedger is the single writer of a tenant's semantic memory: it
//     applies merges, stores, corrections, feedback, undos and forgets one at
//     a time, so two sessions that end at once never lose an update.
package workflows
