// Package scenarios measures the whole write path and recall together on
// a corpus of memory scenarios (the format is in the bench's FORMAT.md and
// summarised below): for each scenario a fresh tenant lives through a few
// agent sessions, ended in order, each after the previous one's memories
// are recallable; then the memory state and recall are checked.
//
// A scenario checks four things:
//
//   - extraction: every matcher in a session's expect_memories matches at
//     least one memory distilled from that session (the memory each of its
//     candidates ended in: inserted, merged into, or superseding);
//   - noise: a session distils at most max_memories memories;
//   - the final state: live matchers match a live memory, not_live ones
//     match none, once ones match exactly one, and the tenant holds at
//     most max_live live memories;
//   - probes: recall's first result matches top1, one of the first three
//     matches top3, no result matches a forbid matcher, and a none probe
//     gets no result at all.
//
// A matcher matches a memory when its kind (if given) is the memory's,
// every string of all and at least one of any occur in the memory's text,
// and none of none does; strings match case-insensitively as substrings,
// and a lesson's text includes its counter-example.
//
// Run drives any System (the service layer on the embedded stack, in
// cmd/hindsight) and returns a Report: per check, per tag and overall,
// with every failure in words, so that a person can read why it failed.
// The overall score is the share of all checks that held.
package scenarios
