// Package gitrepo tells which repository a directory is part of, so that
// sessions are grouped by the repository they worked on rather than by the
// folder it was checked out in: the worktrees and clones of one repository
// are one project, and two repositories in folders of the same name are
// two.
package gitrepo

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// Timeout bounds the git commands one Project runs, together: a hook has
// a second or two for everything it does.
const Timeout = time.Second

// Project is the project of the repository dir is in: its identity is
// the remote's URL (origin, else upstream, else the first by name), else
// the repository's root commit, else the main worktree's directory; its
// name is the remote's repository name, else the main worktree's folder.
// A directory outside any repository, or one git cannot read (no git, a
// repository owned by another user, the timeout), is its own project
// ("dir:" its path). An empty dir is no project.
func Project(ctx context.Context, dir string) memory.Project {
	dir = strings.TrimSpace(dir)
	if dir == "" {
		return memory.Project{}
	}
	fallback := memory.ProjectOf(memory.ProjectDirectory+filepath.Clean(dir), "")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fallback
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	out, err := git(ctx, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil || out == "" {
		return fallback
	}
	common := filepath.Clean(strings.TrimSpace(out))
	// The main worktree holds the common directory as .git; a bare
	// repository is the common directory itself.
	main := common
	if filepath.Base(common) == ".git" {
		main = filepath.Dir(common)
	}
	name := strings.TrimSuffix(filepath.Base(main), ".git")
	if remotes, err := git(ctx, dir, "config", "--get-regexp", `^remote\..*\.url$`); err == nil {
		if id := memory.RemoteProjectID(preferredRemote(remotes)); id != "" {
			return memory.ProjectOf(id, "")
		}
	}
	if roots, err := git(ctx, dir, "rev-list", "--max-parents=0", "HEAD"); err == nil {
		// A history can have several roots; every clone has them all, so
		// the least names the repository the same way everywhere.
		if ids := strings.Fields(roots); len(ids) > 0 {
			return memory.ProjectOf(memory.ProjectRootCommit+slices.Min(ids), name)
		}
	}
	return memory.ProjectOf(memory.ProjectDirectory+main, name)
}

// preferredRemote is the URL of origin, else of upstream, else of the
// first remote by name, from `git config --get-regexp` lines
// ("remote.origin.url URL").
func preferredRemote(lines string) string {
	urls := map[string]string{}
	var names []string
	for line := range strings.SplitSeq(lines, "\n") {
		key, url, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(key, "remote."), ".url")
		if _, seen := urls[name]; !seen {
			urls[name] = strings.TrimSpace(url)
			names = append(names, name)
		}
	}
	for _, n := range []string{"origin", "upstream"} {
		if u, ok := urls[n]; ok {
			return u
		}
	}
	if len(names) == 0 {
		return ""
	}
	return urls[slices.Min(names)]
}

// git runs git in dir, with none of the caller's GIT_ variables (a hook
// runs inside the agent's environment, which may point git elsewhere),
// and returns its standard output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	env := []string{"GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "LC_ALL=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		return "", err
	}
	return out.String(), nil
}
