package payloadcodec

import (
	"bytes"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

func TestRoundTripAndKeys(t *testing.T) {
	c, err := New("0123456789abcdef-key-one")
	if err != nil {
		t.Fatal(err)
	}
	p, err := converter.GetDefaultDataConverter().ToPayload("When reading sales_2024.csv, use encoding='gbk'.")
	if err != nil {
		t.Fatal(err)
	}
	enc, err := c.Encode([]*commonpb.Payload{p})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(enc[0].Data, []byte("gbk")) || string(enc[0].Metadata[converter.MetadataEncoding]) != Encoding {
		t.Fatalf("encoded payload is not encrypted: %v", enc[0])
	}
	dec, err := c.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := converter.GetDefaultDataConverter().FromPayload(dec[0], &s); err != nil || !strings.Contains(s, "gbk") {
		t.Fatalf("round trip gave %q, %v", s, err)
	}
	// Plain payloads (histories from before encryption) pass through.
	if dec, err := c.Decode([]*commonpb.Payload{p}); err != nil || dec[0] != p {
		t.Fatalf("a plain payload: %v %v", dec, err)
	}
	// Another key says so, instead of returning garbage.
	other, _ := New("0123456789abcdef-key-two")
	if _, err := other.Decode(enc); err == nil || !strings.Contains(err.Error(), "HINDSIGHT_PAYLOAD_KEY") {
		t.Fatalf("decoding with another key: %v", err)
	}
	if _, err := New("short"); err == nil {
		t.Fatal("a 5-character key was accepted")
	}
}
