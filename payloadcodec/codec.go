// Package payloadcodec encrypts Temporal payloads with AES-256-GCM, so that
// workflow histories (which carry session metadata, candidate memories and
// merge decisions) hold no plaintext in the Temporal server's database.
//
// Every process that starts workflows or runs a worker must use the same
// key: set HINDSIGHT_PAYLOAD_KEY. Operators read histories in the Temporal
// UI or CLI through a codec server: `hindsight` serves one at /codec on
// its HTTP listener when the key is set (see the README).
package payloadcodec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"
)

// Encoding marks an encrypted payload.
const Encoding = "binary/encrypted"

// MinKeyLength is the shortest key accepted, in characters.
const MinKeyLength = 16

// Codec is a converter.PayloadCodec that encrypts with AES-256-GCM under a
// key derived from the configured secret. Payloads it did not encrypt
// pass through Decode unchanged, so histories written before encryption
// was turned on stay readable.
type Codec struct {
	aead  cipher.AEAD
	keyID string
}

var _ converter.PayloadCodec = (*Codec)(nil)

// New returns a codec for key (at least MinKeyLength characters).
func New(key string) (*Codec, error) {
	if len(key) < MinKeyLength {
		return nil, fmt.Errorf("payload key is %d characters; use at least %d random ones", len(key), MinKeyLength)
	}
	sum := sha256.Sum256([]byte("hindsight payload key\x00" + key))
	block, err := aes.NewCipher(sum[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	id := sha256.Sum256(sum[:])
	return &Codec{aead: aead, keyID: hex.EncodeToString(id[:4])}, nil
}

// Encode implements converter.PayloadCodec.
func (c *Codec) Encode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, err
		}
		nonce := make([]byte, c.aead.NonceSize())
		if _, err := rand.Read(nonce); err != nil {
			return nil, err
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte(Encoding), "encryption-key-id": []byte(c.keyID)},
			Data:     c.aead.Seal(nonce, nonce, plain, nil),
		}
	}
	return out, nil
}

// Decode implements converter.PayloadCodec.
func (c *Codec) Decode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != Encoding {
			out[i] = p
			continue
		}
		if id := string(p.GetMetadata()["encryption-key-id"]); id != c.keyID {
			return nil, fmt.Errorf("payload was encrypted with key %s, this process has key %s: set the same HINDSIGHT_PAYLOAD_KEY everywhere", id, c.keyID)
		}
		n := c.aead.NonceSize()
		if len(p.Data) < n {
			return nil, fmt.Errorf("encrypted payload is too short")
		}
		plain, err := c.aead.Open(nil, p.Data[:n], p.Data[n:], nil)
		if err != nil {
			return nil, fmt.Errorf("decrypt payload: %w", err)
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
