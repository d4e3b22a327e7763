package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

func runHealthcheck(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("healthcheck", "URL", `
GET URL (e.g. http://127.0.0.1:8080/readyz) and exit 0 on a 2xx answer, 1
otherwise. For container healthchecks in images without a shell or curl.`)
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fs.Arg(0), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s: %s", fs.Arg(0), resp.Status, body)
	}
	return nil
}
