package memory

import (
	"net/url"
	"path"
	"strings"
)

// Project is where an agent worked: a repository, told by its identity
// rather than by the folder it was checked out in, so that the worktrees
// of one repository are one project and two repositories that happen to
// sit in folders of the same name are two.
type Project struct {
	// ID is the repository's identity: its remote ("github.com/acme/shop"),
	// else its root commit ("git:<sha>"), else, when nothing tells the
	// repository, the directory itself ("dir:/home/dana/src/shop"). Empty
	// when a caller named the project only by name (stored before
	// projects had identities).
	ID string `json:"id,omitempty"`
	// Name is what people call it: the repository's name ("shop"). It is
	// an entity of the project's episodes and memories.
	Name string `json:"name,omitempty"`
}

// Project ID prefixes for repositories without a remote.
const (
	ProjectRootCommit = "git:"
	ProjectDirectory  = "dir:"
)

// MaxProjectID bounds a project's identity.
const MaxProjectID = 512

// IsZero reports whether p names no project.
func (p Project) IsZero() bool { return p.ID == "" && p.Name == "" }

// Entity is the entity the project's episodes and memories carry: its
// name, normalised.
func (p Project) Entity() string { return NormalizeEntity(p.Name) }

// ProjectOf reads a project as callers give it: an identity (a remote's
// "host/owner/repo", "git:<sha>", "dir:/path"), a directory (an agent's
// working directory, when its repository could not be read), or a bare
// name. name, when given, is the display name (an identity by root commit
// says none). Nothing given is the zero Project.
func ProjectOf(project, name string) Project {
	s := strings.TrimSpace(project)
	name = strings.TrimSpace(name)
	var p Project
	switch {
	case s == "":
		return Project{Name: name}
	case strings.HasPrefix(s, ProjectRootCommit):
		p.ID = ProjectRootCommit + strings.ToLower(strings.TrimSpace(strings.TrimPrefix(s, ProjectRootCommit)))
	case strings.HasPrefix(s, ProjectDirectory):
		p.ID = ProjectDirectory + cleanDir(strings.TrimPrefix(s, ProjectDirectory))
	case isDirectory(s):
		p.ID = ProjectDirectory + cleanDir(s)
	case isRemoteID(s):
		p.ID = strings.TrimSuffix(strings.TrimSuffix(s, "/"), ".git")
	default:
		// A bare name, as callers sent before projects had identities (a
		// relative path is named by its last element).
		return Project{Name: cmpOr(name, lastElement(s))}
	}
	p.Name = cmpOr(name, lastElement(strings.TrimPrefix(strings.TrimPrefix(p.ID, ProjectDirectory), ProjectRootCommit)))
	if strings.HasPrefix(p.ID, ProjectRootCommit) && name == "" {
		p.Name = "" // a commit is no name
	}
	return p
}

// RemoteProjectID is a repository's identity from its remote's URL: host
// and path, without scheme, user, port, credentials or ".git", so that
// "git@github.com:acme/shop.git" and "https://github.com/acme/shop" are
// one repository. A remote on this machine's disk is "dir:" its path.
func RemoteProjectID(remote string) string {
	r := strings.TrimSpace(remote)
	if r == "" {
		return ""
	}
	var host, p string
	switch {
	case strings.Contains(r, "://"):
		u, err := url.Parse(r)
		if err != nil {
			return ""
		}
		if u.Scheme == "file" {
			return ProjectDirectory + cleanDir(u.Path)
		}
		host, p = u.Hostname(), u.Path
	case strings.HasPrefix(r, "/") || strings.HasPrefix(r, "."):
		return ProjectDirectory + cleanDir(r)
	default:
		// scp-like: [user@]host:path
		before, after, ok := strings.Cut(r, ":")
		if !ok {
			return ""
		}
		if i := strings.LastIndexByte(before, '@'); i >= 0 {
			before = before[i+1:]
		}
		host, p = before, after
	}
	p = strings.Trim(strings.TrimSuffix(strings.Trim(p, "/"), ".git"), "/")
	if host == "" || p == "" {
		return ""
	}
	return strings.ToLower(host) + "/" + p
}

// isDirectory reports whether s is a directory path: absolute (Unix or
// Windows) or from a home directory.
func isDirectory(s string) bool {
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") || strings.HasPrefix(s, `\\`) {
		return true
	}
	return len(s) >= 3 && s[1] == ':' && (s[2] == '\\' || s[2] == '/')
}

// isRemoteID reports whether s reads as a remote's identity: a host with
// a dot, then a path.
func isRemoteID(s string) bool {
	host, rest, ok := strings.Cut(s, "/")
	return ok && rest != "" && strings.Contains(host, ".") && !strings.ContainsAny(host, " :@\\")
}

func cleanDir(dir string) string {
	d := path.Clean(strings.ReplaceAll(strings.TrimSpace(dir), "\\", "/"))
	if d == "." {
		return ""
	}
	return d
}

func lastElement(p string) string {
	p = strings.TrimRight(strings.ReplaceAll(p, "\\", "/"), "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	if p == "." || p == "~" {
		return ""
	}
	return p
}
