package service

import (
	"context"

	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
)

// Release lets a quarantined memory out: a person judged that its text is
// knowledge about the work, not an instruction to the agent. It becomes
// live, flagged released, as a decision with reason that an undo reverts.
// It is for people (the console, hindsight quarantine release), never an
// MCP tool: an agent that read a poisoned memory must not free it.
func (s *Service) Release(ctx context.Context, tenant, id, reason, requestID string) (memory.Decision, bool, error) {
	req := ledger.Request{Tenant: tenant, Op: ledger.OpRelease, MemoryIDs: []string{id}, Reason: reason}
	return s.decide(ctx, req, requestID, id, reason)
}
