package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/hindsight-memory/hindsight/httpguard"
	"github.com/hindsight-memory/hindsight/payloadcodec"
)

// withPayloadCodec returns o with payloads and failures encrypted when
// HINDSIGHT_PAYLOAD_KEY is set, so that Temporal's histories hold no
// memory text in plaintext.
func withPayloadCodec(o client.Options) (client.Options, error) {
	key := os.Getenv("HINDSIGHT_PAYLOAD_KEY")
	if key == "" {
		return o, nil
	}
	c, err := payloadcodec.New(key)
	if err != nil {
		return o, fmt.Errorf("HINDSIGHT_PAYLOAD_KEY: %w", err)
	}
	o.DataConverter, o.FailureConverter = c.DataConverter(), c.FailureConverter()
	return o, nil
}

// payloadConverter is the data converter withPayloadCodec sets, to read
// payloads outside the SDK (a ledger's history, in a repair); nil means
// the default.
func payloadConverter() (converter.DataConverter, error) {
	o, err := withPayloadCodec(client.Options{})
	return o.DataConverter, err
}

func runCodecServer(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("codec-server", "[--addr 127.0.0.1:8081] [--origin URL]", `
Serve Temporal's remote codec protocol (POST /encode, /decode) with the
HINDSIGHT_PAYLOAD_KEY codec, so that the Temporal UI ("Codec Server"
setting, or the UI's codec endpoint) and the temporal CLI
(--codec-endpoint) can show encrypted workflow histories in clear to an
operator who holds the key. Bind it to loopback or put it behind your
access control: whoever reaches it can decrypt.`, "HINDSIGHT_PAYLOAD_KEY")
	addr := fs.String("addr", "127.0.0.1:8081", "listen address")
	origin := fs.String("origin", "http://127.0.0.1:8233", "the Temporal UI's origin, allowed by CORS")
	if err := parse(fs, args); err != nil {
		return err
	}
	key := os.Getenv("HINDSIGHT_PAYLOAD_KEY")
	if key == "" {
		return errors.New("codec-server: set HINDSIGHT_PAYLOAD_KEY to the key the workers use")
	}
	c, err := payloadcodec.New(key)
	if err != nil {
		return err
	}
	codec := converter.NewPayloadCodecHTTPHandler(c)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", *origin)
		w.Header().Set("Access-Control-Allow-Credentials", "true")
		w.Header().Set("Access-Control-Allow-Headers", "X-Namespace,Content-Type,Authorization")
		if r.Method == http.MethodOptions {
			return
		}
		codec.ServeHTTP(w, r)
	})
	ln, err := listen(*addr, "the codec server", "--addr")
	if err != nil {
		return err
	}
	// The Host it answers for is its own (and HINDSIGHT_ALLOWED_HOSTS),
	// and the one browser origin it serves is the Temporal UI's.
	guard, err := httpguard.New(httpguard.Config{Listen: ln.Addr().String(), Hosts: httpguard.List(os.Getenv("HINDSIGHT_ALLOWED_HOSTS")),
		Origins: []string{*origin}, TrustedProxies: httpguard.List(os.Getenv("HINDSIGHT_TRUSTED_PROXIES"))})
	if err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{Handler: guard.Wrap(h), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	fmt.Fprintf(out, "codec server on http://%s (POST /encode, /decode)\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
