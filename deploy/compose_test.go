package deploy

import (
	"bufio"
	"bytes"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// composeFile models the parts of docker-compose.yml this deployment uses.
// It is decoded with unknown fields rejected, so a misspelt key
// (healtcheck) fails even before `docker-compose config` runs.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]*struct{}      `yaml:"volumes"`
	Secrets  map[string]composeSecret  `yaml:"secrets"`
	// Extension fields (x-...) hold the YAML anchors shared by services.
	Extensions map[string]yaml.Node `yaml:",inline"`
}

type composeService struct {
	Image       string                       `yaml:"image"`
	Build       *composeBuild                `yaml:"build"`
	User        string                       `yaml:"user"`
	ReadOnly    bool                         `yaml:"read_only"`
	Tmpfs       []string                     `yaml:"tmpfs"`
	CapDrop     []string                     `yaml:"cap_drop"`
	SecurityOpt []string                     `yaml:"security_opt"`
	Restart     string                       `yaml:"restart"`
	Entrypoint  []string                     `yaml:"entrypoint"`
	Command     []string                     `yaml:"command"`
	Environment map[string]string            `yaml:"environment"`
	Volumes     []string                     `yaml:"volumes"`
	Ports       []string                     `yaml:"ports"`
	Secrets     []string                     `yaml:"secrets"`
	Ulimits     map[string]composeUlimit     `yaml:"ulimits"`
	Healthcheck *composeHealthcheck          `yaml:"healthcheck"`
	DependsOn   map[string]composeDependency `yaml:"depends_on"`
}

type composeBuild struct {
	Context    string            `yaml:"context"`
	Dockerfile string            `yaml:"dockerfile"`
	Args       map[string]string `yaml:"args"`
}

type composeHealthcheck struct {
	Test        []string `yaml:"test"`
	Interval    string   `yaml:"interval"`
	Timeout     string   `yaml:"timeout"`
	Retries     int      `yaml:"retries"`
	StartPeriod string   `yaml:"start_period"`
}

type composeDependency struct {
	Condition string `yaml:"condition"`
}

type composeUlimit struct {
	Soft int `yaml:"soft"`
	Hard int `yaml:"hard"`
}

type composeSecret struct {
	File string `yaml:"file"`
}

// oneShot reports whether the service runs to completion (schema setup,
// migrations) rather than serving.
func (s composeService) oneShot() bool { return s.Restart == "no" }

func loadCompose(t *testing.T) (*composeFile, []byte) {
	t.Helper()
	raw := readFile(t, filepath.Join(repoRoot(t), "docker-compose.yml"))
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	var f composeFile
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("docker-compose.yml: %v (every depends_on must be a map with a condition; a key this test does not model must be added to composeService)", err)
	}
	for k := range f.Extensions {
		if !strings.HasPrefix(k, "x-") {
			t.Fatalf("docker-compose.yml: unknown top-level key %q", k)
		}
	}
	if len(f.Services) == 0 {
		t.Fatal("docker-compose.yml has no services")
	}
	return &f, raw
}

// The services the issue asks for, by role.
var wantServices = []string{
	"postgresql", "temporal", "temporal-ui", "clickhouse",
	"etcd", "minio", "milvus", "migrate", "worker", "mcp",
}

func TestCompose(t *testing.T) {
	f, raw := loadCompose(t)
	root := repoRoot(t)

	t.Run("services", func(t *testing.T) {
		for _, name := range wantServices {
			if _, ok := f.Services[name]; !ok {
				t.Errorf("no %s service", name)
			}
		}
	})

	t.Run("images pinned", func(t *testing.T) {
		for name, s := range f.Services {
			if s.Image == "" {
				t.Errorf("%s: no image", name)
				continue
			}
			if _, tag := splitImage(s.Image); tag == "" || tag == "latest" {
				t.Errorf("%s: image %s must be pinned to a version", name, s.Image)
			}
		}
	})

	t.Run("healthchecks and restarts", func(t *testing.T) {
		for name, s := range f.Services {
			switch {
			case s.oneShot():
				if s.Healthcheck != nil {
					t.Errorf("%s: a one-shot service has no health to check", name)
				}
			case s.Restart != "unless-stopped":
				t.Errorf("%s: restart %q; long-running services restart unless-stopped, one-shot ones say restart: \"no\"", name, s.Restart)
			case s.Healthcheck == nil || len(s.Healthcheck.Test) < 2:
				t.Errorf("%s: a long-running service needs a healthcheck", name)
			case s.Healthcheck.Test[0] != "CMD" && s.Healthcheck.Test[0] != "CMD-SHELL":
				t.Errorf("%s: healthcheck test must start with CMD or CMD-SHELL", name)
			}
		}
	})

	t.Run("depends_on conditions", func(t *testing.T) {
		for name, s := range f.Services {
			for dep, d := range s.DependsOn {
				target, ok := f.Services[dep]
				if !ok {
					t.Errorf("%s depends on undefined service %s", name, dep)
					continue
				}
				switch d.Condition {
				case "service_healthy":
					if target.oneShot() || target.Healthcheck == nil {
						t.Errorf("%s waits for %s to be healthy, but %s has no healthcheck", name, dep, dep)
					}
				case "service_completed_successfully":
					if !target.oneShot() {
						t.Errorf("%s waits for %s to complete, but %s is long-running", name, dep, dep)
					}
				default:
					t.Errorf("%s depends on %s with condition %q; use service_healthy or service_completed_successfully", name, dep, d.Condition)
				}
			}
		}
		// Hindsight's processes start only when everything they use is up.
		for _, name := range []string{"worker", "mcp"} {
			for dep, cond := range map[string]string{
				"migrate": "service_completed_successfully", "temporal": "service_healthy",
				"clickhouse": "service_healthy", "milvus": "service_healthy",
			} {
				if got := f.Services[name].DependsOn[dep].Condition; got != cond {
					t.Errorf("%s must depend on %s with %s, has %q", name, dep, cond, got)
				}
			}
		}
	})

	t.Run("ports on loopback", func(t *testing.T) {
		for name, s := range f.Services {
			for _, p := range s.Ports {
				if !strings.HasPrefix(p, "127.0.0.1:") {
					t.Errorf("%s publishes %q; bind every published port to 127.0.0.1", name, p)
				}
			}
		}
	})

	t.Run("volumes", func(t *testing.T) {
		used := map[string]bool{}
		for name, s := range f.Services {
			for _, v := range s.Volumes {
				parts := strings.Split(v, ":")
				src := parts[0]
				if strings.HasPrefix(src, ".") || strings.HasPrefix(src, "/") {
					// Bind mounts are for configuration shipped in the repository.
					if parts[len(parts)-1] != "ro" {
						t.Errorf("%s: bind mount %q must be read-only (:ro); data goes in named volumes", name, v)
					}
					if _, err := os.Stat(filepath.Join(root, src)); err != nil {
						t.Errorf("%s: bind mount source %s: %v", name, src, err)
					}
					continue
				}
				if len(parts) < 2 {
					t.Errorf("%s: anonymous volume %q; name it", name, v)
					continue
				}
				if _, ok := f.Volumes[src]; !ok {
					t.Errorf("%s: volume %s is not declared under the top-level volumes", name, src)
				}
				used[src] = true
			}
		}
		for v := range f.Volumes {
			if !used[v] {
				t.Errorf("volume %s is declared but no service uses it", v)
			}
		}
	})

	t.Run("credentials from .env", func(t *testing.T) {
		for name, s := range f.Services {
			for k, v := range s.Environment {
				if !looksSecret(k) {
					continue
				}
				ms := composeVars(v)
				if len(ms) != 1 || ms[0][0] != v {
					t.Errorf("%s: %s must come from .env as ${VAR...}, not be written in the file", name, k)
					continue
				}
				m := ms[0]
				optional := k == "OPENAI_API_KEY" || k == "MILVUS_TOKEN"
				if !optional && !strings.HasPrefix(m[2], ":?") {
					t.Errorf("%s: %s=%s must be required (${%s:?message}) so that a missing password stops docker-compose", name, k, v, m[1])
				}
			}
		}
	})

	t.Run(".env.example documents every variable", func(t *testing.T) {
		example := envFile(t, filepath.Join(root, ".env.example"))
		referenced := map[string]bool{}
		for _, m := range composeVars(string(raw)) {
			referenced[m[1]] = true
			if _, ok := example[m[1]]; !ok {
				t.Errorf("docker-compose.yml uses ${%s}, which .env.example does not document", m[1])
			}
		}
		for k, v := range example {
			if !referenced[k] {
				t.Errorf(".env.example sets %s, which docker-compose.yml does not use", k)
			}
			if looksSecret(k) && v != "" {
				t.Errorf(".env.example gives %s a value; secrets stay empty in the example", k)
			}
		}
	})

	t.Run("hindsight services", func(t *testing.T) {
		checkHindsightServices(t, f, root)
	})

	t.Run("temporal", func(t *testing.T) {
		s := f.Services["temporal"]
		path := s.Environment["DYNAMIC_CONFIG_FILE_PATH"]
		if !slices.Contains(s.Volumes, "./deploy/temporal/dynamicconfig.yaml:"+path+":ro") {
			t.Errorf("temporal: DYNAMIC_CONFIG_FILE_PATH=%q is not where deploy/temporal/dynamicconfig.yaml is mounted", path)
		}
		// The one-shot admin services run scripts from deploy/temporal/scripts.
		for name, s := range f.Services {
			for _, arg := range s.Command {
				if rel, ok := strings.CutPrefix(arg, "/scripts/"); ok {
					if _, err := os.Stat(filepath.Join(root, "deploy/temporal/scripts", rel)); err != nil {
						t.Errorf("%s runs %s: %v", name, arg, err)
					}
				}
			}
		}
	})
}

// interpolation matches ${VAR}, ${VAR:-default} and ${VAR:?message}, and
// the escaped $${VAR}, which docker-compose leaves to the container's shell:
// callers skip matches that start with "$$".
var interpolation = regexp.MustCompile(`\$?\$\{([A-Z_][A-Z0-9_]*)((?::?[-?])[^}]*)?\}`)

// composeVars returns the variables docker-compose interpolates in s.
func composeVars(s string) [][]string {
	var out [][]string
	for _, m := range interpolation.FindAllStringSubmatch(s, -1) {
		if !strings.HasPrefix(m[0], "$$") {
			out = append(out, m)
		}
	}
	return out
}

func looksSecret(name string) bool {
	for _, s := range []string{"PASSWORD", "PWD", "SECRET", "TOKEN", "API_KEY"} {
		if strings.Contains(name, s) && !strings.HasSuffix(name, "_FILE") && name != "HINDSIGHT_MCP_TOKENS" {
			return true
		}
	}
	return false
}

// envFile parses a .env file: KEY=value lines, comments on their own lines.
func envFile(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(readFile(t, path)))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s:%d: not KEY=value", path, n)
		}
		if strings.Contains(v, " #") {
			t.Errorf("%s:%d: trailing comment; put comments on their own line", path, n)
		}
		out[k] = v
	}
	return out
}

// checkHindsightServices checks the services built from deploy/Dockerfile
// against the image and the configuration contract.
func checkHindsightServices(t *testing.T, f *composeFile, root string) {
	seen := map[string]bool{}
	for name, s := range f.Services {
		if s.Build == nil {
			continue
		}
		if s.Build.Dockerfile != "deploy/Dockerfile" || s.Build.Context != "." {
			t.Errorf("%s: build must use deploy/Dockerfile with the repository root as context", name)
		}
		if s.User != fmt.Sprintf("%d:%d", imageUser, imageUser) {
			t.Errorf("%s: user %q, want the image's non-root user %d:%d", name, s.User, imageUser, imageUser)
		}
		if !s.ReadOnly || !slices.Contains(s.CapDrop, "ALL") || !slices.Contains(s.SecurityOpt, "no-new-privileges:true") {
			t.Errorf("%s: run read_only, with cap_drop ALL and no-new-privileges", name)
		}
		if len(s.Command) == 0 || !subcommands[s.Command[0]] {
			t.Errorf("%s: command %v is not a production subcommand", name, s.Command)
			continue
		}
		cmd := s.Command[0]
		seen[cmd] = true
		for k := range s.Environment {
			if !knownEnv[k] {
				t.Errorf("%s: sets %s, which hindsight does not read", name, k)
			}
		}
		addrVar := map[string]string{"worker": "HINDSIGHT_HEALTH_ADDR", "mcp": "HINDSIGHT_MCP_ADDR"}[cmd]
		if addrVar == "" {
			continue
		}
		addr := s.Environment[addrVar]
		port, loopback, err := listenPort(addr)
		if err != nil {
			t.Errorf("%s: %s=%q: %v", name, addrVar, addr, err)
			continue
		}
		if loopback {
			t.Errorf("%s: %s=%q is unreachable from outside the container", name, addrVar, addr)
		}
		// The healthcheck runs the binary itself (the image has no shell or
		// curl) against the port the process listens on.
		hc := s.Healthcheck
		if hc == nil || len(hc.Test) != 4 || hc.Test[0] != "CMD" || hc.Test[1] != "/hindsight" || hc.Test[2] != "healthcheck" {
			t.Errorf("%s: healthcheck must be [CMD, /hindsight, healthcheck, <url>], is %v", name, hc)
		} else if u, err := url.Parse(hc.Test[3]); err != nil || u.Port() != strconv.Itoa(port) || u.Path != "/readyz" {
			t.Errorf("%s: healthcheck URL %s must be /readyz on port %d (%s)", name, hc.Test[3], port, addrVar)
		}
		if !slices.ContainsFunc(s.Ports, func(p string) bool { return strings.HasSuffix(p, ":"+strconv.Itoa(port)) }) {
			t.Errorf("%s: publishes no port to %d, where it listens", name, port)
		}
		if cmd == "mcp" {
			tokens := s.Environment["HINDSIGHT_TOKENS_FILE"]
			secret, ok := strings.CutPrefix(tokens, "/run/secrets/")
			switch {
			case !ok:
				t.Errorf("%s: listens on %q, so HINDSIGHT_TOKENS_FILE must be a compose secret under /run/secrets/, is %q", name, addr, tokens)
			case !slices.Contains(s.Secrets, secret):
				t.Errorf("%s: HINDSIGHT_TOKENS_FILE=%s but the service does not mount secret %s", name, tokens, secret)
			case f.Secrets[secret].File == "":
				t.Errorf("secret %s has no file", secret)
			}
		}
	}
	for cmd := range subcommands {
		if !seen[cmd] {
			t.Errorf("no service runs `hindsight %s`", cmd)
		}
	}
}

// TestComposeConfig runs Debian's docker-compose (1.29) on the file: the
// authoritative check that it is valid, with variables interpolated.
func TestComposeConfig(t *testing.T) {
	root := repoRoot(t)
	bin, err := exec.LookPath("docker-compose")
	if err != nil {
		t.Fatal("docker-compose is not installed; it validates docker-compose.yml. " +
			"Install Debian's package: sudo apt-get install -y docker-compose (`make tools` does this)")
	}
	example := envFile(t, filepath.Join(root, ".env.example"))
	f, _ := loadCompose(t)
	required := requiredVars(f)
	if len(required) == 0 {
		t.Fatal("docker-compose.yml requires no variable; its passwords must come from .env")
	}

	// run runs `docker-compose config` with the given .env contents and no
	// other environment, so that neither the developer's shell nor a real
	// .env in the repository changes the outcome.
	run := func(t *testing.T, env map[string]string) (stdout, stderr string, err error) {
		t.Helper()
		dir := t.TempDir()
		var b strings.Builder
		for k, v := range env {
			fmt.Fprintf(&b, "%s=%s\n", k, v)
		}
		envPath := filepath.Join(dir, "env")
		if err := os.WriteFile(envPath, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "--project-directory", root, "--env-file", envPath,
			"-f", filepath.Join(root, "docker-compose.yml"), "config")
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err = cmd.Run()
		return out.String(), errb.String(), err
	}

	filled := map[string]string{}
	for k, v := range example {
		filled[k] = v
	}
	for _, k := range required {
		filled[k] = "test-" + strings.ToLower(k)
	}

	t.Run("valid", func(t *testing.T) {
		out, stderr, err := run(t, filled)
		if err != nil {
			t.Fatalf("docker-compose config: %v\n%s", err, stderr)
		}
		var rendered struct {
			Services map[string]struct {
				Environment map[string]string `yaml:"environment"`
				Ports       []string          `yaml:"ports"`
			} `yaml:"services"`
		}
		if err := yaml.Unmarshal([]byte(out), &rendered); err != nil {
			t.Fatalf("docker-compose config output: %v", err)
		}
		// After interpolation, every published port is still on loopback.
		for name, s := range rendered.Services {
			for _, p := range s.Ports {
				if !strings.HasPrefix(p, "127.0.0.1:") {
					t.Errorf("%s publishes %s after interpolation", name, p)
				}
			}
		}
		// The passwords reach the processes from .env.
		if got := rendered.Services["worker"].Environment["CLICKHOUSE_PASSWORD"]; got != filled["CLICKHOUSE_PASSWORD"] {
			t.Errorf("worker gets CLICKHOUSE_PASSWORD=%q, want the value from .env", got)
		}
	})

	for _, missing := range required {
		t.Run("without "+missing, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{}
			for k, v := range filled {
				if k != missing {
					env[k] = v
				}
			}
			_, stderr, err := run(t, env)
			if err == nil {
				t.Fatalf("docker-compose config succeeded without %s", missing)
			}
			if !strings.Contains(stderr, "set "+missing+" in .env") {
				t.Errorf("the error does not tell the user to set %s:\n%s", missing, stderr)
			}
		})
	}
}

// requiredVars returns the variables docker-compose.yml requires (${VAR:?...}).
func requiredVars(f *composeFile) []string {
	seen := map[string]bool{}
	for _, s := range f.Services {
		for _, v := range s.Environment {
			for _, m := range composeVars(v) {
				if strings.HasPrefix(m[2], ":?") {
					seen[m[1]] = true
				}
			}
		}
	}
	return keys(seen)
}
