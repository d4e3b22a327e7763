package service

import (
	"context"

	"github.com/hindsight-memory/hindsight/auth"
)

// Authorize applies auth.Authorize with the service's store to the caller
// ctx carries: what the MCP tools and the console ask before they read or
// change what a caller names.
func (s *Service) Authorize(ctx context.Context, tenant string, a auth.Action) error {
	return auth.Authorize(ctx, s.store, tenant, a)
}

// sessionWriter is the user events of user go into a session for
// (auth.SessionWriter): whatever front end sends them, two users' sessions
// are never merged into one, and a session stays its user's.
func (s *Service) sessionWriter(ctx context.Context, tenant, sessionID, user string) (string, error) {
	return auth.SessionWriter(ctx, s.store, tenant, sessionID, user)
}
