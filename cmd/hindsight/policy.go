package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hindsight-memory/hindsight/keys"
	"github.com/hindsight-memory/hindsight/redact"
	"github.com/hindsight-memory/hindsight/service"
)

// serviceConfig is the service's configuration from the stack flags and
// the environment: the personal-data policy (HINDSIGHT_PII_POLICY). The
// redactor, keyed with the deployment's redaction key, comes from the
// runtime (app.Runtime.Redactor).
func serviceConfig(s *stackFlags) (service.Config, error) {
	cfg := service.Config{TaskQueue: s.taskQueue}
	p, err := redact.ParsePolicy(os.Getenv("HINDSIGHT_PII_POLICY"))
	if err != nil {
		return cfg, fmt.Errorf("HINDSIGHT_PII_POLICY: %w", err)
	}
	cfg.Policy = p
	for t := range strings.SplitSeq(os.Getenv("HINDSIGHT_KEEP_RAW_EVENTS"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			cfg.KeepRawEvents = append(cfg.KeepRawEvents, t)
		}
	}
	return cfg, nil
}

func runPolicy(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("policy", "show", `
Show what Hindsight does with secrets and personal data before it stores
anything: the secrets it detects (always replaced by a typed placeholder
with a keyed hash), and the personal-data policy (HINDSIGHT_PII_POLICY:
keep, mask or drop per class).`, "HINDSIGHT_PII_POLICY", "HINDSIGHT_REDACTION_KEY")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) != "show" {
		fs.Usage()
		return errUsage
	}
	s := stackFlags{dataDir: envOr("HINDSIGHT_DATA_DIR", "./data")}
	cfg, err := serviceConfig(&s)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "secrets (always replaced, in events, episodes, memories, decisions and LLM prompts):")
	fmt.Fprintf(out, "  %s\n", strings.Join(redact.SecretKinds(), ", "))
	if os.Getenv(keys.Redaction.Env) != "" {
		fmt.Fprintln(out, "  placeholder hash keyed with HINDSIGHT_REDACTION_KEY")
	} else {
		fmt.Fprintf(out, "  placeholder hash keyed with HINDSIGHT_REDACTION_KEY, required with CLICKHOUSE_ADDR; embedded, with %s (made on first start, readable by you only)\n", filepath.Join(s.dataDir, "keys", keys.Redaction.File))
	}
	if len(cfg.KeepRawEvents) > 0 {
		fmt.Fprintf(out, "  raw events kept unredacted for tenants %s (HINDSIGHT_KEEP_RAW_EVENTS); what is derived from them is redacted\n", strings.Join(cfg.KeepRawEvents, ", "))
	}
	fmt.Fprintln(out, "personal data (HINDSIGHT_PII_POLICY):")
	for _, c := range redact.Classes {
		fmt.Fprintf(out, "  %-12s %s\n", c, cfg.Policy[c])
	}
	return nil
}
