package main

import (
	"context"
	"crypto/subtle"
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

// payloadCodec is the codec HINDSIGHT_PAYLOAD_KEY configures (nil when
// it is unset): its keys, the newest first, and HINDSIGHT_PAYLOAD_MODE
// (strict, the default, refuses plaintext payloads; migrate reads them).
func payloadCodec() (*payloadcodec.Codec, error) {
	ks := payloadcodec.ParseKeys(os.Getenv("HINDSIGHT_PAYLOAD_KEY"))
	mode := os.Getenv("HINDSIGHT_PAYLOAD_MODE")
	if mode != "" && mode != "strict" && mode != "migrate" {
		return nil, fmt.Errorf("HINDSIGHT_PAYLOAD_MODE=%q: want strict (refuse payloads that are not encrypted) or migrate (read them, from histories written before the key was set)", mode)
	}
	if len(ks) == 0 {
		if mode == "migrate" {
			return nil, errors.New("HINDSIGHT_PAYLOAD_MODE=migrate without HINDSIGHT_PAYLOAD_KEY: the migration mode reads plaintext histories while new payloads are encrypted, so it needs a key")
		}
		return nil, nil
	}
	c, err := payloadcodec.New(payloadcodec.Config{Keys: ks, AcceptPlaintext: mode == "migrate"})
	if err != nil {
		return nil, fmt.Errorf("HINDSIGHT_PAYLOAD_KEY: %w", err)
	}
	return c, nil
}

// withPayloadCodec returns o with payloads and failures encrypted when
// HINDSIGHT_PAYLOAD_KEY is set, so that Temporal's histories hold no
// memory text in plaintext.
func withPayloadCodec(o client.Options) (client.Options, error) {
	c, err := payloadCodec()
	if err != nil || c == nil {
		return o, err
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
(--codec-endpoint, with --codec-auth "Bearer $HINDSIGHT_CODEC_TOKEN") can
show encrypted workflow histories in clear to an operator who holds the
key. Every request needs Authorization: Bearer HINDSIGHT_CODEC_TOKEN (16+
characters; it refuses to start without one): whoever can call it can
decrypt. Bind it to loopback or put it behind your access control too.
It decodes every key HINDSIGHT_PAYLOAD_KEY lists and passes payloads that
were never encrypted through, for display.`, "HINDSIGHT_PAYLOAD_KEY", "HINDSIGHT_CODEC_TOKEN")
	addr := fs.String("addr", "127.0.0.1:8081", "listen address")
	origin := fs.String("origin", "http://127.0.0.1:8233", "the Temporal UI's origin, allowed by CORS")
	if err := parse(fs, args); err != nil {
		return err
	}
	ks := payloadcodec.ParseKeys(os.Getenv("HINDSIGHT_PAYLOAD_KEY"))
	if len(ks) == 0 {
		return errors.New("codec-server: set HINDSIGHT_PAYLOAD_KEY to the keys the workers use")
	}
	token := os.Getenv("HINDSIGHT_CODEC_TOKEN")
	if len(token) < 16 {
		return errors.New("codec-server: set HINDSIGHT_CODEC_TOKEN to a token of 16+ characters (openssl rand -hex 32): every request must carry it as Authorization: Bearer")
	}
	c, err := payloadcodec.New(payloadcodec.Config{Keys: ks, AcceptPlaintext: true})
	if err != nil {
		return err
	}
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
	srv := &http.Server{Handler: guard.Wrap(codecHandler(c, token, *origin)), ReadHeaderTimeout: 10 * time.Second}
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

// codecHandler serves Temporal's codec protocol with c to requests that
// carry the token, and answers the UI's CORS preflight.
func codecHandler(c *payloadcodec.Codec, token, origin string) http.Handler {
	codec := converter.NewPayloadCodecHTTPHandler(c)
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", origin)
		w.Header().Set("Access-Control-Allow-Credentials", "true")
		w.Header().Set("Access-Control-Allow-Headers", "X-Namespace,Content-Type,Authorization")
		w.Header().Set("Vary", "Origin")
		if r.Method == http.MethodOptions {
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="hindsight codec"`)
			http.Error(w, "codec server: a bearer token is required (HINDSIGHT_CODEC_TOKEN)", http.StatusUnauthorized)
			return
		}
		codec.ServeHTTP(w, r)
	})
}
