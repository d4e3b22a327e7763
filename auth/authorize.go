package auth

import (
	"context"
	"slices"

	"github.com/hindsight-memory/hindsight/memory"
)

// Store is what Authorize reads to decide: whose a memory, a session or a
// decision is. memory.EpisodicStore has it.
type Store interface {
	Memory(ctx context.Context, tenant, id string) (memory.Memory, error)
	SessionUsers(ctx context.Context, tenant, sessionID string) ([]string, error)
	Decision(ctx context.Context, tenant, id string) (memory.Decision, error)
}

// Kind is what an Action does.
type Kind int

// What a caller may ask to do. Each names, in Action.ID, the memory,
// session, user or decision it touches.
const (
	// ReadMemory reads a memory: its text, history or resource.
	ReadMemory Kind = iota + 1
	// ChangeMemory corrects, pins, marks outdated or gives feedback on a
	// memory.
	ChangeMemory
	// ForgetMemory deletes a memory for good.
	ForgetMemory
	// WriteSession appends to or ends the session ID for Action.User, the
	// user the events are written for ("" for none).
	WriteSession
	// ForgetSession deletes a session, its episode and what was learned
	// only from it.
	ForgetSession
	// ForgetUser deletes everything of a user.
	ForgetUser
	// Undo restores the state before a decision.
	Undo
	// Release lets a quarantined memory out: a person judged its text to
	// be knowledge, not an instruction to the agent.
	Release
)

// Action is something a caller asks to do.
type Action struct {
	Kind Kind
	ID   string
	// User is, for WriteSession, the user the events are written for.
	User string
}

// Authorize decides whether the caller ctx carries (see From; a context
// without an identity is the process's own work, with the tenant's
// authority) may do a in tenant, and says why not in the caller's words.
// It is the one rule of the MCP tools and the console:
//
//   - a tenant-wide caller may do anything in its tenant, except write
//     into a session that belongs to another user than the one it writes
//     for: a session belongs to the user who first wrote to it, and is
//     never merged with another's;
//   - a caller bound to a user reads and changes the shared memories, its
//     user's and its agents' (another user's is "not found"), forgets and
//     releases from quarantine only its user's and agents' memories, and
//     forgets only its user's sessions and its user,
//     writes only into new sessions or its user's, and undoes only
//     decisions on memories it sees.
func Authorize(ctx context.Context, s Store, tenant string, a Action) error {
	id, _ := From(ctx)
	switch a.Kind {
	case ReadMemory, ChangeMemory, ForgetMemory, Release:
		if !id.Bound() {
			return nil
		}
		m, err := s.Memory(ctx, tenant, a.ID)
		if err != nil {
			return err
		}
		if !id.Viewer().SeesScope(m.Scope) {
			return memory.NotFoundf("memory", "memory %s not found", a.ID)
		}
		if a.Kind == ForgetMemory && !owns(id, m.Scope) {
			return memory.Invalidf("forget", "memory %s is team knowledge (scope %s); this token may forget only user %q's memories and its agents'", a.ID, m.Scope.Norm(), id.UserID)
		}
		if a.Kind == Release && !owns(id, m.Scope) {
			return memory.Invalidf("release", "memory %s is team knowledge (scope %s); only a tenant-wide sign-in may release it", a.ID, m.Scope.Norm())
		}
		return nil
	case WriteSession:
		_, err := SessionWriter(ctx, s, tenant, a.ID, a.User)
		return err
	case ForgetSession:
		if !id.Bound() {
			return nil
		}
		users, err := s.SessionUsers(ctx, tenant, a.ID)
		if err != nil {
			return err
		}
		if len(users) == 0 || !slices.Equal(users, []string{id.UserID}) {
			return memory.NotFoundf("forget", "session %s not found among user %q's sessions", a.ID, id.UserID)
		}
		return nil
	case ForgetUser:
		if id.Bound() && a.ID != id.UserID {
			return memory.Invalidf("forget", "user_id %q: this token acts for user %q only", a.ID, id.UserID)
		}
		return nil
	case Undo:
		if !id.Bound() {
			return nil
		}
		d, err := s.Decision(ctx, tenant, a.ID)
		if err != nil {
			return err
		}
		for _, m := range append(slices.Clone(d.Before), d.After...) {
			if !id.Viewer().SeesScope(m.Scope) {
				return memory.NotFoundf("undo", "decision %s not found", a.ID)
			}
		}
		return nil
	}
	return memory.Invalidf("authorize", "unknown action %d", a.Kind)
}

// owns reports whether a bound identity may forget memories of scope s:
// its user's and its agents', not the team's.
func owns(id Identity, s memory.Scope) bool {
	s = s.Norm()
	switch s.Kind() {
	case memory.ScopeUser:
		return s.Owner() == id.UserID
	case memory.ScopeAgent:
		return id.MayActAs(s.Owner())
	}
	return false
}

// SessionWriter is who writes into a session: the user events are
// written for, given who the caller is and whose the session is. A
// session belongs to the user who first wrote to it. Events of another
// user are refused, whoever sends them; a caller bound to a user may also
// not write into a session started without one, which a tenant-wide
// caller wrote. A tenant-wide caller that names no user writes for the
// session's user, so that a session stays one user's.
func SessionWriter(ctx context.Context, s Store, tenant, session, user string) (string, error) {
	id, _ := From(ctx)
	users, err := s.SessionUsers(ctx, tenant, session)
	if err != nil {
		return "", err
	}
	owner := ""
	for _, u := range users {
		if u != "" {
			owner = u
		}
	}
	for _, u := range users {
		switch {
		case u == user:
		case u == "" && !id.Bound():
			// The platform logged without a user and names one now.
		case user == "" && !id.Bound():
			// The platform logs without naming the user again.
		default:
			return "", memory.Conflictf("session", "session ID %s is another user's session: a session belongs to the user who first wrote to it; use a session ID of your own", session)
		}
	}
	if user == "" {
		user = owner
	}
	return user, nil
}

// ActFor resolves the user_id and agent_id a caller names against its
// identity: a caller bound to a user acts for that user whatever it
// names (naming another is an error), and for an agent only if the token
// lists it (a token that lists one agent acts as it when none is named).
// A tenant-wide caller acts for whom it names, as any agent unless its
// token lists agents.
func ActFor(ctx context.Context, user, agent string) (string, string, error) {
	id, _ := From(ctx)
	if id.Bound() {
		if user != "" && user != id.UserID {
			return "", "", memory.Invalidf("user_id", "user_id %q: this token acts for user %q only; leave user_id out or give %q", user, id.UserID, id.UserID)
		}
		user = id.UserID
	}
	switch {
	case agent == "" && len(id.Agents) == 1:
		agent = id.Agents[0]
	case agent != "" && !id.MayActAs(agent):
		if len(id.Agents) == 0 {
			return "", "", memory.Invalidf("agent_id", "agent_id %q: this token acts for user %q and for no agent; the tokens file lists a token's agents (agents=a,b)", agent, id.UserID)
		}
		return "", "", memory.Invalidf("agent_id", "agent_id %q: this token acts as %s only", agent, quoteList(id.Agents))
	}
	return user, agent, nil
}

// CheckScope decides whether the caller may write a memory into scope s
// (a full scope, as memory.ParseScope returns it): another user's scope
// or an agent's it may not act as is refused.
func CheckScope(ctx context.Context, s memory.Scope) error {
	id, _ := From(ctx)
	s = s.Norm()
	switch s.Kind() {
	case memory.ScopeUser:
		if id.Bound() && s.Owner() != id.UserID {
			return memory.Invalidf("scope", "scope %q: this token acts for user %q only", s, id.UserID)
		}
	case memory.ScopeAgent:
		if !id.MayActAs(s.Owner()) {
			return memory.Invalidf("scope", "scope %q: this token may not act as agent %q", s, s.Owner())
		}
	}
	return nil
}

func quoteList(xs []string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += ", "
		}
		out += "\"" + x + "\""
	}
	return out
}
