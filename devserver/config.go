package devserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"go.temporal.io/api/enums/v1"
)

// Defaults applied by Config.withDefaults.
const (
	DefaultHost         = "127.0.0.1"
	DefaultFrontendPort = 7233
	DefaultUIPort       = 8233
	DefaultNamespace    = "default"
	// DefaultRetention keeps closed workflows a month: long enough to look back
	// at last week's distillations in the UI, short enough that a dev
	// database does not grow without bound.
	DefaultRetention = 30 * 24 * time.Hour
)

// UIDisabled as Config.UIPort runs no Web UI.
const UIDisabled = -1

// Errors that callers may want to tell apart, e.g. to suggest a flag.
var (
	// ErrPortInUse means a port the server must listen on is taken.
	ErrPortInUse = errors.New("devserver: port already in use")
	// ErrDataDirInUse means another running dev server holds the DataDir.
	ErrDataDirInUse = errors.New("devserver: data directory in use")
)

// Config says where the dev server keeps its state and listens.
// The zero value of every field except DataDir means its default.
type Config struct {
	// DataDir holds the SQLite database (temporal.db) and the lock file that
	// keeps a second server off it. Created if missing. Required.
	DataDir string
	// Host is the IP address the frontend, the UI and the server's internal
	// services listen on. Default DefaultHost.
	Host string
	// FrontendPort is the gRPC port workers and clients dial. Default
	// DefaultFrontendPort. Port 0 (any free port) is not offered because
	// workers started elsewhere need a port they can be told in advance;
	// tests pick one with FreePort.
	FrontendPort int
	// UIPort is the Web UI's HTTP port. Default DefaultUIPort; UIDisabled
	// runs no UI.
	UIPort int
	// Namespace is registered at start if it does not exist yet.
	// Default DefaultNamespace.
	Namespace string
	// Retention is how long closed workflows of Namespace are kept; an
	// existing namespace is updated to it. Default DefaultRetention; the
	// server refuses less than a day.
	Retention time.Duration
	// SearchAttributes are registered on Namespace at start unless already
	// there, e.g. {"HindsightTenant": enums.INDEXED_VALUE_TYPE_KEYWORD}. One
	// that exists with another type is an error: Temporal cannot change it.
	SearchAttributes map[string]enums.IndexedValueType
	// Logger receives the server's own logs at warn level and above.
	// Default: discard them.
	Logger *slog.Logger
}

// withDefaults returns c with every unset field set to its default.
func (c Config) withDefaults() Config {
	if c.Host == "" {
		c.Host = DefaultHost
	}
	if c.FrontendPort == 0 {
		c.FrontendPort = DefaultFrontendPort
	}
	if c.UIPort == 0 {
		c.UIPort = DefaultUIPort
	}
	if c.Namespace == "" {
		c.Namespace = DefaultNamespace
	}
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// validate reports the first setting that cannot work, saying what to fix.
// It expects defaults to be applied.
func (c Config) validate() error {
	if c.DataDir == "" {
		return errors.New("devserver: DataDir is required (the directory for temporal.db)")
	}
	if net.ParseIP(c.Host) == nil {
		return fmt.Errorf("devserver: Host %q must be an IP address such as 127.0.0.1", c.Host)
	}
	if c.FrontendPort < 1 || c.FrontendPort > 65535 {
		return fmt.Errorf("devserver: FrontendPort %d must be between 1 and 65535", c.FrontendPort)
	}
	if c.UIPort != UIDisabled && (c.UIPort < 1 || c.UIPort > 65535) {
		return fmt.Errorf("devserver: UIPort %d must be between 1 and 65535, or %d to disable the UI", c.UIPort, UIDisabled)
	}
	if c.UIPort == c.FrontendPort {
		return fmt.Errorf("devserver: UIPort and FrontendPort are both %d; they need different ports", c.UIPort)
	}
	if c.Retention < 24*time.Hour {
		return fmt.Errorf("devserver: Retention %v is below Temporal's minimum of one day", c.Retention)
	}
	for name, typ := range c.SearchAttributes {
		if name == "" {
			return errors.New("devserver: SearchAttributes has an empty name")
		}
		if _, known := enums.IndexedValueType_name[int32(typ)]; !known || typ == enums.INDEXED_VALUE_TYPE_UNSPECIFIED {
			return fmt.Errorf("devserver: search attribute %q has no valid type (got %v); use e.g. enums.INDEXED_VALUE_TYPE_KEYWORD", name, typ)
		}
	}
	return nil
}
