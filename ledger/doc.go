// Package ledger is the contract of a tenant's memory ledger, the single
// writer of its semantic memory: the operations it takes, their requests
// and validation, its replies and receipts, the state it carries, and the
// names under which its workflow, signals and updates are registered. The
// workflow (package workflows), the activities that enqueue and apply
// requests, and the clients (package service) all speak it; it depends on
// the domain types alone.
package ledger
