package service_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/service"
)

// A project's recent sessions are those of its repository, wherever it
// was checked out, and those stored before episodes had an identity that
// carry its name; another repository of the same name is another project,
// unless the caller gave nothing that tells them apart.
func TestRecentSessionsOfARepository(t *testing.T) {
	ctx := context.Background()
	st := memory.NewMemStore()
	base := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	put := func(session, project, name string, hours int) {
		ep := memory.Episode{ID: memory.EpisodeID(memory.DefaultTenant, session), Tenant: memory.DefaultTenant, SessionID: session,
			Task: session, Outcome: memory.OutcomeSuccess, Status: memory.EpisodeLive, Project: project, ProjectName: name,
			Entities: []string{memory.NormalizeEntity("shop")}, StartedAt: base, EndedAt: base.Add(time.Duration(hours) * time.Hour), CreatedAt: base}
		if err := st.PutEpisode(ctx, ep); err != nil {
			t.Fatal(err)
		}
	}
	put("main-checkout", "git:9f2c", "shop", 1)
	put("worktree", "git:9f2c", "shop", 3)
	put("before-identities", "", "", 2)
	put("another-shop", "github.com/other/shop", "shop", 4)
	s := service.New(service.Config{}, st, nil, nil, nil)
	for _, c := range []struct {
		name string
		p    memory.Project
		want []string
	}{
		{"the repository", memory.ProjectOf("git:9f2c", "shop"), []string{"worktree", "before-identities", "main-checkout"}},
		{"the other repository", memory.ProjectOf("github.com/other/shop", ""), []string{"another-shop", "before-identities"}},
		{"a directory git could not read", memory.ProjectOf("/home/ana/shop", ""), []string{"another-shop", "worktree", "before-identities", "main-checkout"}},
		{"a name", memory.ProjectOf("shop", ""), []string{"another-shop", "worktree", "before-identities", "main-checkout"}},
		{"no project", memory.Project{}, nil},
	} {
		eps, err := s.RecentSessions(ctx, memory.DefaultTenant, c.p, "", 5)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ep := range eps {
			got = append(got, ep.SessionID)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
