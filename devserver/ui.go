package devserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
)

// webUI is a running Temporal Web UI.
type webUI struct {
	srv  *uiserver.Server
	done chan struct{} // closed when srv.Start has returned
	url  string
}

// startUI serves the Web UI for the frontend at frontendAddr and returns once
// it answers its health check.
//
// The UI server's Start blocks, so it runs on its own goroutine; it also exits
// the process if it cannot listen, which is why Start checks the port first.
func startUI(ctx context.Context, c Config, frontendAddr string) (*webUI, error) {
	host := c.Host
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		host = "[" + host + "]" // the UI formats its address as host:port
	}
	srv := uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
		TemporalGRPCAddress: frontendAddr,
		Host:                host,
		Port:                c.UIPort,
		EnableUI:            true,
		DefaultNamespace:    c.Namespace,
		// Served over plain HTTP on this machine: a Secure CSRF cookie would
		// never reach the server, and every button that writes would fail.
		CORS:     uiconfig.CORS{CookieInsecure: true},
		HideLogs: true,
		// The machine may be offline, and news is not what a dev UI is for.
		DisableNewsFetch: true,
	}))
	ui := &webUI{
		srv:  srv,
		done: make(chan struct{}),
		url:  "http://" + net.JoinHostPort(c.Host, strconv.Itoa(c.UIPort)),
	}
	go func() {
		defer close(ui.done)
		_ = srv.Start() // returns nil once Stop closes it; other errors exit inside
	}()
	if err := ui.waitHealthy(ctx); err != nil {
		ui.stop()
		return nil, err
	}
	return ui, nil
}

func (ui *webUI) waitHealthy(ctx context.Context) error {
	hc := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ui.url+"/healthz", nil)
		if err != nil {
			return fmt.Errorf("devserver: web UI health check: %w", err)
		}
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("devserver: web UI at %s did not come up: %w (last: %v)", ui.url, ctx.Err(), err)
		case <-ui.done:
			return fmt.Errorf("devserver: web UI at %s stopped while starting", ui.url)
		case <-tick.C:
		}
	}
}

// stop closes the UI's listener and waits for its Start to return.
func (ui *webUI) stop() {
	ui.srv.Stop()
	<-ui.done
}
