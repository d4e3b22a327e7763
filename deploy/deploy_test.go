package deploy

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// knownEnv is the configuration contract of the hindsight binary (see
// `hindsight worker --help` and `hindsight mcp --help`): every variable a
// manifest or the compose file sets must be one of these, so that a typo
// (CLICKHOUSE_ADRR) fails here instead of being silently ignored in
// production. GOMEMLIMIT is read by the Go runtime.
var knownEnv = map[string]bool{
	"TEMPORAL_ADDR":             true,
	"TEMPORAL_NAMESPACE":        true,
	"HINDSIGHT_TASK_QUEUE":      true,
	"CLICKHOUSE_ADDR":           true,
	"CLICKHOUSE_DATABASE":       true,
	"CLICKHOUSE_USER":           true,
	"CLICKHOUSE_PASSWORD":       true,
	"CLICKHOUSE_CLUSTER":        true,
	"MILVUS_ADDR":               true,
	"MILVUS_TOKEN":              true,
	"OPENAI_BASE_URL":           true,
	"OPENAI_API_KEY":            true,
	"HINDSIGHT_LLM_MODEL":       true,
	"HINDSIGHT_EMBED_MODEL":     true,
	"HINDSIGHT_EMBED_DIM":       true,
	"HINDSIGHT_TENANT":          true,
	"HINDSIGHT_TOKENS_FILE":     true,
	"HINDSIGHT_LOG_LEVEL":       true,
	"HINDSIGHT_HEALTH_ADDR":     true,
	"HINDSIGHT_MCP_ADDR":        true,
	"HINDSIGHT_PAYLOAD_KEY":     true,
	"HINDSIGHT_REDACTION_KEY":   true,
	"HINDSIGHT_CONSOLE_KEY":     true,
	"HINDSIGHT_PII_POLICY":      true,
	"HINDSIGHT_KEEP_RAW_EVENTS": true,
	"GOMEMLIMIT":                true,
}

// secretEnv are the variables that carry credentials: they may only come
// from a Secret (Kubernetes) or from .env (compose), never be written into
// a manifest.
var secretEnv = map[string]bool{
	"CLICKHOUSE_PASSWORD":     true,
	"MILVUS_TOKEN":            true,
	"OPENAI_API_KEY":          true,
	"HINDSIGHT_PAYLOAD_KEY":   true,
	"HINDSIGHT_REDACTION_KEY": true,
	"HINDSIGHT_CONSOLE_KEY":   true,
}

// subcommands are the production commands of the hindsight binary.
var subcommands = map[string]bool{"worker": true, "mcp": true, "migrate": true}

// imageUser is the numeric user the image runs as (distroless "nonroot").
// The Dockerfile, the compose file and the manifests must all agree on it.
const imageUser = 65532

// repoRoot returns the repository root: the tests run in deploy/.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root %s has no go.mod: %v", root, err)
	}
	return root
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// listenPort returns the port of a listen address such as ":8080" or
// "0.0.0.0:8765", and whether the host is loopback-only.
func listenPort(addr string) (port int, loopback bool, err error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, false, err
	}
	port, err = strconv.Atoi(p)
	if err != nil {
		return 0, false, err
	}
	if host == "localhost" {
		return port, true, nil
	}
	ip := net.ParseIP(host)
	return port, ip != nil && ip.IsLoopback(), nil
}
