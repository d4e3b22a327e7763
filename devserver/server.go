package devserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/temporal"
)

const (
	// startTimeout bounds Start when ctx has no earlier deadline. The server
	// is up in about a second; this only keeps a broken start from hanging.
	startTimeout = time.Minute
	// pollInterval paces the readiness checks in Start.
	pollInterval = 25 * time.Millisecond
	// quiet is a log level above every level the server logs at.
	quiet = slog.LevelError + 4
)

// Server is a running Temporal dev server and, unless disabled, its Web UI.
// Its methods are safe for concurrent use.
type Server struct {
	frontendAddr string
	uiURL        string

	logLevel *slog.LevelVar
	temporal temporal.Server
	ui       *webUI
	lock     *dataDirLock

	stopOnce sync.Once
	stopErr  error
}

// Start runs a Temporal server on SQLite in cfg.DataDir, and the Web UI,
// in this process. It returns once the frontend accepts connections, the
// namespace exists with cfg's retention and search attributes, and the UI
// answers. ctx bounds the start only, and Start gives up after a minute
// whatever ctx says; the server runs until Stop.
//
// It fails with ErrDataDirInUse if another dev server holds cfg.DataDir and
// with ErrPortInUse if the frontend or UI port is taken.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()

	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("devserver: create data directory: %w", err)
	}
	lock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	s := &Server{
		frontendAddr: net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.FrontendPort)),
		logLevel:     new(slog.LevelVar),
		lock:         lock,
	}
	s.logLevel.Set(slog.LevelWarn)
	logger := slog.New(minLevelHandler{next: cfg.Logger.Handler(), min: s.logLevel})

	if err := s.start(ctx, cfg, logger); err != nil {
		_ = s.Stop() // releases whatever start got to, the lock included
		return nil, err
	}
	return s, nil
}

func (s *Server) start(ctx context.Context, cfg Config, logger *slog.Logger) error {
	ports, err := reservePorts(cfg)
	if err != nil {
		return err
	}
	scfg := serverConfig(cfg, ports)
	if err := ensureSchema(scfg.Persistence.DataStores[storeName].SQL); err != nil {
		return err
	}
	if err := s.startTemporal(scfg, serverLogger{slog: logger}); err != nil {
		return err
	}

	tc, err := dialFrontend(ctx, s.frontendAddr, cfg.Namespace, logger)
	if err != nil {
		return err
	}
	defer tc.Close()
	if err := ensureNamespace(ctx, tc, cfg); err != nil {
		return err
	}
	if err := ensureSearchAttributes(ctx, tc, cfg); err != nil {
		return err
	}

	if cfg.UIPort != UIDisabled {
		if s.ui, err = startUI(ctx, cfg, s.frontendAddr); err != nil {
			return err
		}
		s.uiURL = s.ui.url
	}
	return nil
}

// startTemporal builds and starts the server, turning a call to its fatal
// logger (see serverLogger.Fatal) into an error. Any other panic is a bug and
// is left alone.
func (s *Server) startTemporal(cfg *config.Config, logger serverLogger) (err error) {
	defer func() {
		if r := recover(); r != nil {
			fe, ok := r.(fatalError)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("devserver: temporal server failed to start: %w", fe)
		}
	}()
	srv, err := newTemporalServer(cfg, logger)
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return fmt.Errorf("devserver: start temporal server: %w", err)
	}
	s.temporal = srv
	return nil
}

// dialFrontend connects to the frontend, retrying until it answers or ctx
// ends. The server's Start returns once its services have started, which is
// not quite the moment the frontend serves requests.
func dialFrontend(ctx context.Context, addr, namespace string, logger *slog.Logger) (client.Client, error) {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		tc, err := client.DialContext(ctx, client.Options{
			HostPort:  addr,
			Namespace: namespace,
			Logger:    sdklog.NewStructuredLogger(logger),
		})
		if err == nil {
			return tc, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("devserver: frontend %s did not accept connections: %w", addr, err)
		case <-tick.C:
		}
	}
}

// FrontendAddr is the host:port that workers and clients dial, e.g.
// "127.0.0.1:7233".
func (s *Server) FrontendAddr() string { return s.frontendAddr }

// UIAddr is the Web UI's base URL, e.g. "http://127.0.0.1:8233", or "" when
// the UI is disabled.
func (s *Server) UIAddr() string { return s.uiURL }

// Stop shuts the UI and the server down and releases the data directory.
// Workers and clients of this server should be stopped first. Calling Stop
// again returns the first call's result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		// From here on the server's own logs are only noise: every poller
		// and queue processor whose call is cut off reports it, some as
		// errors. What matters about stopping, Stop returns.
		s.logLevel.Set(quiet)
		var errs []error
		if s.ui != nil {
			s.ui.stop()
		}
		if s.temporal != nil {
			if err := s.temporal.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("devserver: stop temporal server: %w", err))
			}
		}
		if err := s.lock.release(); err != nil {
			errs = append(errs, fmt.Errorf("devserver: release data directory: %w", err))
		}
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}
