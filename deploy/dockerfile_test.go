package deploy

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line int
	cmd  string // upper case: FROM, RUN, ...
	args string
}

// stage is one FROM ... section of a Dockerfile.
type stage struct {
	image, name string
	body        []instruction
}

// parseDockerfile splits a Dockerfile into its global ARG defaults and its
// stages. It handles what this Dockerfile uses: comments, line
// continuations, and ${ARG} references in FROM.
func parseDockerfile(t *testing.T, src []byte) (map[string]string, []stage) {
	t.Helper()
	var ins []instruction
	sc := bufio.NewScanner(bytes.NewReader(src))
	var cur strings.Builder
	start := 0
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && cur.Len() == 0) {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		if body, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(body + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		ins = append(ins, instruction{start, strings.ToUpper(cmd), strings.TrimSpace(args)})
		cur.Reset()
	}
	if cur.Len() > 0 {
		t.Fatalf("Dockerfile ends inside a continued line (from line %d)", start)
	}

	args := map[string]string{}
	var stages []stage
	for _, in := range ins {
		switch {
		case in.cmd == "ARG" && len(stages) == 0:
			k, v, _ := strings.Cut(in.args, "=")
			args[k] = v
		case in.cmd == "FROM":
			f := strings.Fields(in.args)
			st := stage{image: os.Expand(f[0], func(k string) string { return args[k] })}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			}
			stages = append(stages, st)
		case len(stages) == 0:
			t.Fatalf("Dockerfile line %d: %s before the first FROM", in.line, in.cmd)
		default:
			stages[len(stages)-1].body = append(stages[len(stages)-1].body, in)
		}
	}
	return args, stages
}

func TestDockerfile(t *testing.T) {
	root := repoRoot(t)
	_, stages := parseDockerfile(t, readFile(t, filepath.Join(root, "deploy", "Dockerfile")))
	if len(stages) < 2 {
		t.Fatalf("Dockerfile has %d stage(s); want a build stage and a small runtime stage", len(stages))
	}
	build, final := stages[0], stages[len(stages)-1]

	t.Run("build stage", func(t *testing.T) {
		// The Go in the build image must be the release go.mod asks for.
		goLine := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(readFile(t, filepath.Join(root, "go.mod")))
		if goLine == nil {
			t.Fatal("go.mod has no go line")
		}
		if want := "golang:" + string(goLine[1]) + "-"; !strings.HasPrefix(build.image, want) {
			t.Errorf("build image %s does not match go.mod's go %s", build.image, goLine[1])
		}

		var copies []string
		var buildCmd *instruction
		env := map[string]string{}
		for i, in := range build.body {
			switch in.cmd {
			case "COPY":
				copies = append(copies, in.args)
			case "ENV":
				for _, kv := range strings.Fields(in.args) {
					k, v, _ := strings.Cut(kv, "=")
					env[k] = v
				}
			case "RUN":
				if strings.Contains(in.args, "go build") {
					buildCmd = &build.body[i]
				}
			}
		}
		// go.mod and go.sum first, so that the module download layer is
		// cached until the dependencies change.
		if len(copies) < 2 || copies[0] != "go.mod go.sum ./" || copies[1] != ". ." {
			t.Errorf("COPY order %q: want go.mod go.sum ./ before . .", copies)
		}
		if buildCmd == nil {
			t.Fatal("no RUN go build in the build stage")
		}
		for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "-X main.version=", " ./cmd/hindsight"} {
			if !strings.Contains(buildCmd.args, want) {
				t.Errorf("build command (line %d) lacks %q", buildCmd.line, want)
			}
		}
		// Cold builds compile the Temporal server: both Go caches must be
		// BuildKit cache mounts.
		for _, v := range []string{"GOMODCACHE", "GOCACHE"} {
			dir := env[v]
			if dir == "" {
				t.Errorf("the build stage does not set %s", v)
			} else if !strings.Contains(buildCmd.args, "--mount=type=cache,target="+dir) {
				t.Errorf("the go build is not run with a cache mount on %s (%s)", v, dir)
			}
		}
	})

	t.Run("runtime stage", func(t *testing.T) {
		if !strings.HasPrefix(final.image, "gcr.io/distroless/static") && final.image != "scratch" {
			t.Errorf("runtime image %s: want distroless static (or scratch)", final.image)
		}
		var user, entrypoint string
		var copied bool
		for _, in := range final.body {
			switch in.cmd {
			case "USER":
				user = in.args
			case "ENTRYPOINT":
				entrypoint = in.args
			case "COPY":
				copied = copied || strings.HasPrefix(in.args, "--from="+build.name+" ")
			}
		}
		if want := fmt.Sprintf("%d:%d", imageUser, imageUser); user != want {
			t.Errorf("USER %q, want the numeric non-root %s (Kubernetes verifies runAsNonRoot only for numeric users)", user, want)
		}
		if entrypoint != `["/hindsight"]` {
			t.Errorf(`ENTRYPOINT %s, want ["/hindsight"]: the manifests pass only args, the compose healthchecks run /hindsight`, entrypoint)
		}
		if !copied {
			t.Errorf("the runtime stage copies nothing from the %q stage", build.name)
		}
	})

	t.Run("dockerignore", func(t *testing.T) {
		lines := strings.Split(string(readFile(t, filepath.Join(root, ".dockerignore"))), "\n")
		for _, want := range []string{".git", ".env", "secrets/", "data/", "bin/"} {
			if !slices.Contains(lines, want) {
				t.Errorf(".dockerignore does not exclude %s from the build context", want)
			}
		}
	})
}
