package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hindsight-memory/hindsight/memory"
)

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// newRepo makes a repository with one commit in parent/name.
func newRepo(t *testing.T, parent, name string) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte(dir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "add", "README")
	run(t, dir, "commit", "-q", "-m", "first")
	return dir
}

// The worktrees of one repository are one project, named as the
// repository, by its root commit and then by its remote; another
// repository in a folder of the same name is another project.
func TestWorktreesOfOneRepositoryAreOneProject(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on this machine")
	}
	ctx := context.Background()
	base := t.TempDir()
	repo := newRepo(t, base, "shop")
	root := run(t, repo, "rev-list", "--max-parents=0", "HEAD")
	wt1, wt2 := filepath.Join(base, "shop-fix-checkout"), filepath.Join(base, "wt", "feature")
	run(t, repo, "worktree", "add", "-q", "-b", "fix", wt1)
	run(t, repo, "worktree", "add", "-q", "-b", "feature", wt2)

	want := memory.Project{ID: memory.ProjectRootCommit + root, Name: "shop"}
	for _, dir := range []string{repo, filepath.Join(repo, "src"), wt1, wt2} {
		if got := Project(ctx, dir); got != want {
			t.Errorf("%s: %+v, want %+v", dir, got, want)
		}
	}

	other := newRepo(t, filepath.Join(base, "elsewhere"), "shop")
	if got := Project(ctx, other); got.ID == want.ID || got.Name != "shop" {
		t.Errorf("another repository named shop: %+v, want its own identity (not %s) and the name shop", got, want.ID)
	}

	// With a remote, every worktree is the remote's repository, however
	// its URL is written; upstream is used when there is no origin.
	run(t, repo, "remote", "add", "upstream", "https://github.com/acme/storefront.git")
	want = memory.Project{ID: "github.com/acme/storefront", Name: "storefront"}
	for _, dir := range []string{repo, wt1, wt2} {
		if got := Project(ctx, dir); got != want {
			t.Errorf("%s with a remote: %+v, want %+v", dir, got, want)
		}
	}
	run(t, repo, "remote", "add", "origin", "git@github.com:Acme/storefront.git")
	if got := Project(ctx, wt2); got.ID != "github.com/Acme/storefront" {
		t.Errorf("origin is preferred: %+v", got)
	}
	// The caller's GIT_DIR does not point git elsewhere.
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	if got := Project(ctx, wt1); got.ID != "github.com/Acme/storefront" {
		t.Errorf("with GIT_DIR set to another repository: %+v", got)
	}
}

// A directory git cannot tell is its own project; one not on this
// machine too, and nothing is no project.
func TestDirectoriesOutsideRepositories(t *testing.T) {
	ctx := context.Background()
	plain := filepath.Join(t.TempDir(), "notes")
	if err := os.Mkdir(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(plain))
	for dir, want := range map[string]memory.Project{
		plain:                    {ID: memory.ProjectDirectory + plain, Name: "notes"},
		"/nonexistent/src/shop/": {ID: "dir:/nonexistent/src/shop", Name: "shop"},
		"":                       {},
	} {
		if got := Project(ctx, dir); got != want {
			t.Errorf("%q: %+v, want %+v", dir, got, want)
		}
	}
}

func TestPreferredRemote(t *testing.T) {
	for lines, want := range map[string]string{
		"remote.fork.url git@x:a/b\nremote.origin.url https://o/a/b\n": "https://o/a/b",
		"remote.zed.url z\nremote.alpha.url a\n":                       "a",
		"remote.upstream.url u\nremote.fork.url f\n":                   "u",
		"": "",
	} {
		if got := preferredRemote(lines); got != want {
			t.Errorf("%q: %q, want %q", lines, got, want)
		}
	}
}
