// Package activities holds Hindsight's Temporal activities: one struct of
// dependencies (the domain interfaces, built once by the worker) and one
// method per side effect. Activities are idempotent: they derive IDs from
// their input, so a retry rewrites the same rows instead of adding new ones.
// Domain errors that retrying cannot fix (invalid input, not found, a
// conflict) become non-retryable Temporal application errors.
package activities
