package payloadcodec

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

const (
	keyOne = "0123456789abcdef-passphrase-one"
	keyTwo = "8f1c2b7a9e4d3c6b5a0f1e2d3c4b5a69788f1c2b7a9e4d3c6b5a0f1e2d3c4b5a" // 64 hex digits: a key
)

func payload(t *testing.T, v string) *commonpb.Payload {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func text(t *testing.T, p *commonpb.Payload) string {
	t.Helper()
	var s string
	if err := converter.GetDefaultDataConverter().FromPayload(p, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func mustNew(t *testing.T, cfg Config) *Codec {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRoundTrip(t *testing.T) {
	c := mustNew(t, Config{Keys: []string{keyOne}})
	enc, err := c.Encode([]*commonpb.Payload{payload(t, "When reading sales_2024.csv, use encoding='gbk'.")})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(enc[0].Data, []byte("gbk")) || string(enc[0].Metadata[converter.MetadataEncoding]) != Encoding {
		t.Fatalf("encoded payload is not encrypted: %v", enc[0])
	}
	if id := string(enc[0].Metadata[MetadataKeyID]); id != c.NewestKeyID() || len(id) != 12 {
		t.Fatalf("the payload names key %q, want the codec's %q", id, c.NewestKeyID())
	}
	dec, err := c.Decode(enc)
	if err != nil || !strings.Contains(text(t, dec[0]), "gbk") {
		t.Fatalf("round trip: %v", err)
	}
	// The key ID is bound to the ciphertext: a payload relabelled with
	// another key's ID does not decrypt under it.
	both := mustNew(t, Config{Keys: []string{keyTwo, keyOne}})
	relabelled := proto.Clone(enc[0]).(*commonpb.Payload)
	relabelled.Metadata[MetadataKeyID] = []byte(both.NewestKeyID())
	if _, err := both.Decode([]*commonpb.Payload{relabelled}); err == nil {
		t.Fatal("a payload relabelled with another key's ID decrypted")
	}
	if _, err := New(Config{Keys: []string{"short"}}); err == nil {
		t.Fatal("a 5-character key was accepted")
	}
	if _, err := New(Config{}); err == nil {
		t.Fatal("a codec without a key was made")
	}
	if _, err := New(Config{Keys: []string{keyOne, keyOne}}); err == nil {
		t.Fatal("one key twice was accepted")
	}
}

// TestRotation: with a new key put first, payloads are encrypted with it,
// and those the old key encrypted still decrypt; a codec without the old
// key names the key a payload needs.
func TestRotation(t *testing.T) {
	old := mustNew(t, Config{Keys: []string{keyOne}})
	before, err := old.Encode([]*commonpb.Payload{payload(t, "written before the rotation")})
	if err != nil {
		t.Fatal(err)
	}
	rotated := mustNew(t, Config{Keys: []string{keyTwo, keyOne}})
	after, err := rotated.Encode([]*commonpb.Payload{payload(t, "written after the rotation")})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(after[0].Metadata[MetadataKeyID]); got == old.NewestKeyID() || got != rotated.NewestKeyID() {
		t.Fatalf("after the rotation payloads name key %s, want the new key %s", got, rotated.NewestKeyID())
	}
	dec, err := rotated.Decode(append(before, after...))
	if err != nil {
		t.Fatalf("decoding a history of both keys: %v", err)
	}
	if text(t, dec[0]) != "written before the rotation" || text(t, dec[1]) != "written after the rotation" {
		t.Fatalf("decoded %q, %q", text(t, dec[0]), text(t, dec[1]))
	}
	onlyNew := mustNew(t, Config{Keys: []string{keyTwo}})
	if _, err := onlyNew.Decode(before); err == nil || !strings.Contains(err.Error(), old.NewestKeyID()) || !strings.Contains(err.Error(), "HINDSIGHT_PAYLOAD_KEY") {
		t.Fatalf("decoding the old key's payload without it: %v, want an error naming key %s", err, old.NewestKeyID())
	}
	if _, err := old.Decode(after); err == nil {
		t.Fatal("the old key alone decoded the new key's payload")
	}
}

// TestKeysAndPassphrases: 64 hex digits are the key itself; anything
// else is a passphrase stretched with scrypt, not hashed once.
func TestKeysAndPassphrases(t *testing.T) {
	raw, _ := hex.DecodeString(keyTwo)
	if k, err := derive(keyTwo); err != nil || !bytes.Equal(k, raw) {
		t.Fatalf("a hex key: %x, %v, want it as it is", k, err)
	}
	k, err := derive(keyOne)
	if err != nil {
		t.Fatal(err)
	}
	once := sha256.Sum256([]byte(keyOne))
	legacy := sha256.Sum256([]byte("hindsight payload key\x00" + keyOne))
	if len(k) != 32 || bytes.Equal(k, once[:]) || bytes.Equal(k, legacy[:]) || bytes.Contains(k, []byte(keyOne[:8])) {
		t.Fatalf("a passphrase became %x: not stretched", k)
	}
	if k2, _ := derive(keyOne); !bytes.Equal(k, k2) {
		t.Fatal("a passphrase derives two keys: processes would not agree")
	}
}

// TestEarlierPayloadsDecrypt: what an earlier version encrypted (the key
// hashed once with SHA-256, an 8-digit key ID, no additional data) still
// decrypts with the same configured key.
func TestEarlierPayloadsDecrypt(t *testing.T) {
	sum := sha256.Sum256([]byte("hindsight payload key\x00" + keyOne))
	block, _ := aes.NewCipher(sum[:])
	aead, _ := cipher.NewGCM(block)
	id := sha256.Sum256(sum[:])
	plain, _ := proto.Marshal(payload(t, "an earlier version's payload"))
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce)
	earlier := &commonpb.Payload{
		Metadata: map[string][]byte{converter.MetadataEncoding: []byte(Encoding), MetadataKeyID: []byte(hex.EncodeToString(id[:4]))},
		Data:     aead.Seal(nonce, nonce, plain, nil),
	}
	c := mustNew(t, Config{Keys: []string{keyTwo, keyOne}})
	dec, err := c.Decode([]*commonpb.Payload{earlier})
	if err != nil || text(t, dec[0]) != "an earlier version's payload" {
		t.Fatalf("an earlier version's payload: %v", err)
	}
}

// TestPlaintextRefused: with a key set, a payload that is not encrypted
// is refused, except in the migration mode.
func TestPlaintextRefused(t *testing.T) {
	plain := payload(t, "a history from before encryption")
	strict := mustNew(t, Config{Keys: []string{keyOne}})
	if _, err := strict.Decode([]*commonpb.Payload{plain}); err == nil || !strings.Contains(err.Error(), "HINDSIGHT_PAYLOAD_MODE=migrate") {
		t.Fatalf("a plaintext payload with a key set: %v, want it refused with the way out", err)
	}
	migrate := mustNew(t, Config{Keys: []string{keyOne}, AcceptPlaintext: true})
	dec, err := migrate.Decode([]*commonpb.Payload{plain})
	if err != nil || dec[0] != plain {
		t.Fatalf("a plaintext payload in the migration mode: %v", err)
	}
	// The migration mode still encrypts what it writes.
	enc, _ := migrate.Encode([]*commonpb.Payload{plain})
	if string(enc[0].Metadata[converter.MetadataEncoding]) != Encoding {
		t.Fatal("the migration mode wrote plaintext")
	}
}
