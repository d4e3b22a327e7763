package devserver

import (
	"fmt"
	"net"
	"strconv"
)

// FreePort returns a TCP port on 127.0.0.1 that nothing listens on right now.
// Another process may take it before it is used, which is good enough for
// tests.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(DefaultHost, "0"))
	if err != nil {
		return 0, fmt.Errorf("devserver: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// internalPorts are the server's listeners besides the frontend's gRPC port.
// Nothing outside the process dials them, so they are picked, not configured.
type internalPorts struct {
	frontendHTTP, history, matching, worker int
}

// reservePorts checks that the frontend and UI ports of c are free and picks
// distinct free ports for the rest.
//
// Checking first matters because the server and the UI find a taken port only
// deep inside their start-up, where the server gives up through its fatal
// logger and the UI calls os.Exit, and neither says which flag to change.
// Every port stays bound until all are chosen, so that no pick can land on
// another, nor on the frontend or UI port, which are free ephemeral ports
// themselves in tests.
func reservePorts(c Config) (internalPorts, error) {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	hold := func(port int) (int, error) {
		l, err := net.Listen("tcp", net.JoinHostPort(c.Host, strconv.Itoa(port)))
		if err != nil {
			return 0, err
		}
		held = append(held, l)
		return l.Addr().(*net.TCPAddr).Port, nil
	}

	if _, err := hold(c.FrontendPort); err != nil {
		return internalPorts{}, portInUse("Temporal frontend", "--temporal-port", c.Host, c.FrontendPort, err)
	}
	if c.UIPort != UIDisabled {
		if _, err := hold(c.UIPort); err != nil {
			return internalPorts{}, portInUse("Temporal Web UI", "--ui-port", c.Host, c.UIPort, err)
		}
	}
	var p internalPorts
	for _, port := range []*int{&p.frontendHTTP, &p.history, &p.matching, &p.worker} {
		var err error
		if *port, err = hold(0); err != nil {
			return internalPorts{}, fmt.Errorf("devserver: find a free port on %s: %w", c.Host, err)
		}
	}
	return p, nil
}

func portInUse(what, flag, host string, port int, err error) error {
	return fmt.Errorf("%w: the %s needs %s, which another process is listening on; stop that process or choose another port (hindsight dev %s): %v",
		ErrPortInUse, what, net.JoinHostPort(host, strconv.Itoa(port)), flag, err)
}
