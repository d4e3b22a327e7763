// Package payloadcodec encrypts Temporal payloads with AES-256-GCM, so that
// workflow histories (which carry session metadata, candidate memories and
// merge decisions) hold no plaintext in the Temporal server's database.
//
// Every process that starts workflows or runs a worker must use the same
// keys: set HINDSIGHT_PAYLOAD_KEY. Each payload names the key that
// encrypted it in its metadata, so keys rotate: with several keys
// configured (the newest first), payloads are encrypted with the newest
// and decrypted with whichever one they name, and a history that began
// under an old key keeps running under the new one. A key of 64 hex
// digits (or 32 bytes in base64) is used as it is; anything else is a
// passphrase, stretched with scrypt. Once a key is set, a payload that is
// not encrypted is refused, unless the codec runs in the migration mode
// (Config.AcceptPlaintext) that reads histories written before it was.
// Operators read histories in the Temporal UI or CLI through
// `hindsight codec-server`, which asks for a token.
package payloadcodec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"golang.org/x/crypto/scrypt"
	"google.golang.org/protobuf/proto"
)

// Encoding marks an encrypted payload.
const Encoding = "binary/encrypted"

// MetadataKeyID is the payload metadata that names the key that
// encrypted it.
const MetadataKeyID = "encryption-key-id"

// MinKeyLength is the shortest key or passphrase accepted, in characters.
const MinKeyLength = 16

// Config configures a Codec.
type Config struct {
	// Keys are the keys or passphrases, the newest first: Encode uses the
	// first, Decode whichever a payload names. Keep an old key after the
	// new one until every history that holds payloads it encrypted has
	// closed (or continued as new) and passed its retention.
	Keys []string
	// AcceptPlaintext is the migration mode: Decode passes payloads that
	// are not encrypted, as histories written before a key was set hold.
	// Without it they are refused: once a key is set, a plaintext payload
	// was written by something that does not hold it.
	AcceptPlaintext bool
}

// ParseKeys reads keys as HINDSIGHT_PAYLOAD_KEY holds them: separated by
// commas, the newest first.
func ParseKeys(s string) []string {
	var out []string
	for k := range strings.SplitSeq(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// Codec is a converter.PayloadCodec that encrypts with AES-256-GCM.
type Codec struct {
	newest          string // the ID Encode writes
	aeads           map[string]cipher.AEAD
	ids             []string // configured keys' IDs, for errors
	acceptPlaintext bool
}

var _ converter.PayloadCodec = (*Codec)(nil)

// New returns a codec for cfg: at least one key, each at least
// MinKeyLength characters.
func New(cfg Config) (*Codec, error) {
	if len(cfg.Keys) == 0 {
		return nil, fmt.Errorf("payload codec: no key")
	}
	c := &Codec{aeads: map[string]cipher.AEAD{}, acceptPlaintext: cfg.AcceptPlaintext}
	for i, k := range cfg.Keys {
		if len(k) < MinKeyLength {
			return nil, fmt.Errorf("payload key %d of %d is %d characters; use at least %d random ones (openssl rand -hex 32)", i+1, len(cfg.Keys), len(k), MinKeyLength)
		}
		key, err := derive(k)
		if err != nil {
			return nil, err
		}
		id := keyID(key)
		if _, dup := c.aeads[id]; dup {
			return nil, fmt.Errorf("payload key %d of %d is configured twice", i+1, len(cfg.Keys))
		}
		if c.aeads[id], err = gcm(key); err != nil {
			return nil, err
		}
		if i == 0 {
			c.newest = id
		}
		// Before key IDs named a derivation, every key was hashed once
		// with SHA-256: what that wrote still decrypts.
		legacy := sha256.Sum256([]byte("hindsight payload key\x00" + k))
		lsum := sha256.Sum256(legacy[:])
		lid := hex.EncodeToString(lsum[:4])
		if c.aeads[lid], err = gcm(legacy[:]); err != nil {
			return nil, err
		}
		c.ids = append(c.ids, id+" (earlier "+lid+")")
	}
	return c, nil
}

// NewestKeyID is the ID of the key Encode uses.
func (c *Codec) NewestKeyID() string { return c.newest }

// KeyID returns the ID payloads encrypted with key (a key or passphrase)
// carry in their metadata.
func KeyID(key string) (string, error) {
	k, err := derive(key)
	if err != nil {
		return "", err
	}
	return keyID(k), nil
}

// derive turns a configured key into 32 bytes: a key of 64 hex digits or
// of 32 bytes in base64 as it is, a passphrase through scrypt (N=2^15,
// r=8, p=1: about 32 MiB and a tenth of a second, once per process).
// The salt is fixed: there is nowhere to keep one that every process
// reads before it can read anything, and a passphrase still costs an
// attacker scrypt's work per guess.
func derive(k string) ([]byte, error) {
	if len(k) == 64 {
		if b, err := hex.DecodeString(k); err == nil {
			return b, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(k); err == nil && len(b) == 32 {
			return b, nil
		}
	}
	b, err := scrypt.Key([]byte(k), []byte("hindsight payload key v2"), 1<<15, 8, 1, 32)
	if err != nil {
		return nil, fmt.Errorf("payload codec: derive a key from the passphrase: %w", err)
	}
	return b, nil
}

// keyID names a key in payload metadata without saying anything of it:
// 12 hex digits of a hash (an earlier version's IDs have 8).
func keyID(key []byte) string {
	h := sha256.Sum256(append([]byte("hindsight payload key id\x00"), key...))
	return hex.EncodeToString(h[:6])
}

func gcm(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Encode implements converter.PayloadCodec: every payload is encrypted
// with the newest key, and names it.
func (c *Codec) Encode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	aead := c.aeads[c.newest]
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, err
		}
		nonce := make([]byte, aead.NonceSize())
		if _, err := rand.Read(nonce); err != nil {
			return nil, err
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte(Encoding), MetadataKeyID: []byte(c.newest)},
			Data:     aead.Seal(nonce, nonce, plain, []byte(c.newest)),
		}
	}
	return out, nil
}

// Decode implements converter.PayloadCodec: a payload is decrypted with
// the configured key it names. One that is not encrypted is refused,
// unless the codec accepts plaintext (the migration mode).
func (c *Codec) Decode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != Encoding {
			if !c.acceptPlaintext {
				return nil, fmt.Errorf("payload is not encrypted, and HINDSIGHT_PAYLOAD_KEY is set: it was written without the key (a history from before encryption was turned on, or a client without the key); to read such histories while they finish, set HINDSIGHT_PAYLOAD_MODE=migrate")
			}
			out[i] = p
			continue
		}
		id := string(p.GetMetadata()[MetadataKeyID])
		aead, ok := c.aeads[id]
		if !ok {
			return nil, fmt.Errorf("payload was encrypted with key %s, and the configured keys are %s: add the key that wrote it to HINDSIGHT_PAYLOAD_KEY, after the newest", id, strings.Join(c.ids, ", "))
		}
		n := aead.NonceSize()
		if len(p.Data) < n {
			return nil, fmt.Errorf("encrypted payload is too short")
		}
		// Payloads of the key IDs that carry no derivation were sealed
		// without additional data.
		var ad []byte
		if len(id) == 12 {
			ad = []byte(id)
		}
		plain, err := aead.Open(nil, p.Data[:n], p.Data[n:], ad)
		if err != nil {
			return nil, fmt.Errorf("decrypt payload with key %s: %w", id, err)
		}
		var dp commonpb.Payload
		if err := proto.Unmarshal(plain, &dp); err != nil {
			return nil, err
		}
		out[i] = &dp
	}
	return out, nil
}

// DataConverter is Temporal's default converter with payloads encrypted.
func (c *Codec) DataConverter() converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)
}

// FailureConverter encrypts failure messages and stack traces too: an
// activity's error can quote what it was working on.
func (c *Codec) FailureConverter() converter.FailureConverter {
	return temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{DataConverter: c.DataConverter(), EncodeCommonAttributes: true})
}
