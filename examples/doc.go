// Package examples holds realistic agent-session transcripts in the formats
// Hindsight accepts (see README.md in this directory), embedded so that
// demos, tests and the CLI can use them without file paths.
//
// They double as the acceptance test of the offline extractor: every
// sample must distil into its key lesson, preference or rule.
package examples
