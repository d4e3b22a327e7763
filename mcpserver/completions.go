package mcpserver

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hindsight-memory/hindsight/auth"
	"github.com/hindsight-memory/hindsight/llm"
	"github.com/hindsight-memory/hindsight/memory"
)

// completion/complete offers the values an argument of the recall_context
// prompt, or a variable of a resource template, can take: the kinds, the
// task types (the taxonomy's and those in the tenant's memory), the
// projects of the caller's sessions, and the user IDs the caller may
// see (only their own when their token names a user). Values that begin
// with what was typed come first, then those that contain it, each in a
// stable order; at most maxCompletions are sent, with the total.

// maxCompletions is the most values one completion holds (the
// specification's bound).
const maxCompletions = 100

// completer answers completion/complete for the prompt's arguments and the
// templates' variables.
type completer struct{ t *tools }

func (c completer) CompletePromptArgument(ctx context.Context, prompt string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	if prompt != PromptRecall {
		return &mcp.Completion{Values: []string{}}, nil // not Hindsight's: nothing to offer
	}
	return c.complete(ctx, arg)
}

func (c completer) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	switch uri {
	case MemoriesURITemplate, MemoryURIPrefix + "{id}", EpisodeURIPrefix + "{id}":
		return c.complete(ctx, arg)
	}
	return &mcp.Completion{Values: []string{}}, nil
}

func (c completer) complete(ctx context.Context, arg mcp.CompleteArgument) (*mcp.Completion, error) {
	var values []string
	switch arg.Name {
	case "kind":
		for _, k := range memory.Kinds {
			values = append(values, string(k))
		}
	case "task_type", "project", "user_id", "id":
		v, err := c.fromMemory(ctx, arg.Name)
		if err != nil {
			return nil, err
		}
		values = v
	}
	return completion(values, arg.Value), nil
}

// fromMemory lists what the caller's memories and sessions hold for an
// argument.
func (c completer) fromMemory(ctx context.Context, name string) ([]string, error) {
	tenant := auth.TenantFrom(ctx)
	if tenant == "" {
		return nil, nil
	}
	bound := auth.UserFrom(ctx)
	if name == "user_id" && bound != "" {
		return []string{bound}, nil // a caller bound to a user sees no other
	}
	// Names (user IDs, projects, task types) are offered from all the
	// caller may act for: a tenant-wide token may name any user, whose
	// projects it then reads. Memory and episode IDs only from what the
	// resources show it (viewer).
	id, _ := auth.From(ctx)
	v := id.Viewer()
	if name == "id" {
		v = viewer(ctx)
	}
	ms, eps, err := c.t.b.Browse(ctx, tenant, v.Scopes(), resourceListMax)
	if err != nil {
		return nil, err
	}
	var values []string
	if name == "task_type" {
		for _, t := range llm.TaskTypes {
			values = append(values, t.Name)
		}
	}
	for _, m := range ms {
		switch name {
		case "task_type":
			values = append(values, m.TaskType)
		case "user_id":
			if m.Scope.Kind() == "user" {
				values = append(values, m.Scope.Owner())
			}
		case "id":
			values = append(values, m.ID)
		}
	}
	for _, ep := range eps {
		if !v.SeesEpisode(ep) {
			continue
		}
		switch name {
		case "task_type":
			values = append(values, ep.TaskType)
		case "project":
			// The name people type, and the identity that tells two
			// repositories of one name apart.
			values = append(values, ep.ProjectName, ep.Project)
		case "user_id":
			values = append(values, ep.UserID)
		case "id":
			values = append(values, ep.ID)
		}
	}
	return values, nil
}

// completion is the values that match typed: those that begin with it
// (case aside), then those that contain it, each sorted, without blanks
// or repeats, at most maxCompletions.
func completion(values []string, typed string) *mcp.Completion {
	typed = strings.ToLower(strings.TrimSpace(typed))
	seen := map[string]bool{}
	var prefix, inner []string
	for _, v := range values {
		if v == "" || seen[v] {
			continue
		}
		seen[v] = true
		switch l := strings.ToLower(v); {
		case strings.HasPrefix(l, typed):
			prefix = append(prefix, v)
		case strings.Contains(l, typed):
			inner = append(inner, v)
		}
	}
	slices.SortFunc(prefix, func(a, b string) int { return cmp.Compare(strings.ToLower(a), strings.ToLower(b)) })
	slices.SortFunc(inner, func(a, b string) int { return cmp.Compare(strings.ToLower(a), strings.ToLower(b)) })
	all := append(prefix, inner...)
	out := &mcp.Completion{Values: all[:min(len(all), maxCompletions)], Total: len(all)}
	out.HasMore = len(all) > maxCompletions
	if out.Values == nil {
		out.Values = []string{}
	}
	return out
}
