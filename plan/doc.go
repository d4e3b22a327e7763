// Package plan is the one home of planning: every change to semantic
// memory becomes an auditable, undoable memory.Decision here. Merge and
// Store apply a judge's verdict to a candidate (memory_store is Store);
// Correct, Feedback, Decay, Undo and Release plan memory_correct,
// memory_feedback, the lifecycle sweep, merge undo and a release from
// quarantine. VerifyCurrent is the optimistic check an applier makes
// against the current versions before writing.
//
// Planners are pure functions of their inputs: no I/O, no clock, no
// randomness, so they are safe inside retried activities and their results
// are reproducible from the decision log.
package plan
