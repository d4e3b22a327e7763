package redact

import (
	"strings"
	"testing"
)

var testKey = []byte("test-key")

func TestSecretsAreReplacedByTypedPlaceholders(t *testing.T) {
	r := New(testKey, nil)
	for _, c := range []struct {
		in, secret, kind string
	}{
		{"export OPENAI_API_KEY=sk-proj-4fQ9kXz2LmN8pR7tV1wY3bC6dE0gH5jK", "sk-proj-4fQ9kXz2LmN8pR7tV1wY3bC6dE0gH5jK", "openai-key"},
		{"ANTHROPIC_API_KEY=sk-ant-api03-Zx8Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz", "sk-ant-api03-Zx8Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz", "anthropic-key"},
		{"aws configure set aws_access_key_id AKIA4QX7TZ2LMN8PRSTV", "AKIA4QX7TZ2LMN8PRSTV", "aws-access-key"},
		{"aws_secret_access_key = wJr7XUtnFEMIK7MDENGbPxRfiCYz9Q3kLm2Np4Rs", "wJr7XUtnFEMIK7MDENGbPxRfiCYz9Q3kLm2Np4Rs", "aws-secret-key"},
		{"git remote set-url origin https://ghp_Qm4Zx8Lk2Np6Rt0Vw3Yb7Cd1Ef5Gh9Jk2Mn4P@github.com/acme/app", "ghp_Qm4Zx8Lk2Np6Rt0Vw3Yb7Cd1Ef5Gh9Jk2Mn4P", "github-token"},
		{"curl -H 'PRIVATE-TOKEN: glpat-Xy7Zq2Lm9Np4Rs6Tv8Wb'", "glpat-Xy7Zq2Lm9Np4Rs6Tv8Wb", "gitlab-token"},
		{"SLACK_BOT_TOKEN=xoxb-2231-99812-Qz8xLm2Np4Rs6Tv", "xoxb-2231-99812-Qz8xLm2Np4Rs6Tv", "slack-token"},
		{"stripe.api_key = 'sk_live_51Hq8Zx2Lm4Np6Rs8Tv0Wb'", "sk_live_51Hq8Zx2Lm4Np6Rs8Tv0Wb", "stripe-key"},
		{"key=AIzaSyD4Qx8Lm2Np6Rt0Vw3Yb7Cd1Ef5Gh9Jk2M", "AIzaSyD4Qx8Lm2Np6Rt0Vw3Yb7Cd1Ef5Gh9Jk2M", "google-api-key"},
		{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "jwt"},
		{"Authorization: Bearer 8f2Kq9Lm3Np7Rs1Tv5Wx0Yz4", "8f2Kq9Lm3Np7Rs1Tv5Wx0Yz4", "bearer-token"},
		{"psql postgres://app:hunter2@db:5432/prod", "hunter2", "password"},
		{"DB_PASSWORD=Tr0ub4dor&3", "Tr0ub4dor&3", "password"},
		{`{"user": "svc", "password": "Qw3rty!2024"}`, "Qw3rty!2024", "password"},
		{"mysql --password=s3cr3tPass -u root", "s3cr3tPass", "password"},
		{"数据库密码是 Xk29fLq7", "Xk29fLq7", "password"},
		{"count orders using password Tr0ub4dor-x93", "Tr0ub4dor-x93", "password"},
		{`"client_secret": "GOCSPX-9fK2Lm4Np6Rs8Tv0Wb2Yd4Fh"`, "GOCSPX-9fK2Lm4Np6Rs8Tv0Wb2Yd4Fh", "google-oauth-secret"},
		{`-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x\n-----END RSA PRIVATE KEY-----`, `-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x\n-----END RSA PRIVATE KEY-----`, "private-key"},
		{`"signing_key": "q8Z2xLm4Np6Rs8Tv0Wb2Yd4Fh6Jk8"`, "q8Z2xLm4Np6Rs8Tv0Wb2Yd4Fh6Jk8", "password"},
	} {
		got, fs := r.Redact(c.in)
		if strings.Contains(got, c.secret) || len(fs) == 0 {
			t.Errorf("%q → %q: the secret is still there", c.in, got)
			continue
		}
		if !strings.Contains(got, "⟨secret:"+c.kind+":") {
			t.Errorf("%q → %q: want a ⟨secret:%s:…⟩ placeholder", c.in, got, c.kind)
		}
		if again := r.String(got); again != got {
			t.Errorf("redacting twice changed %q to %q", got, again)
		}
	}
}

func TestLookAlikesAreLeftAlone(t *testing.T) {
	r := New(testKey, nil)
	for _, in := range []string{
		"request id 3f2b8c1e-9a4d-4e7b-8f6a-2c1d0e9b7a65",
		"HEAD is now at 9fceb02d0ae598e95dc970b74767f19372d61af8",
		`"integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXGOy0lQJ7ZcBKOs2n1z4KvY0eAQw=="`,
		"image: ghcr.io/acme/api@sha256:4b7f1c0e8d2a9f3b6c5e1d0a7f8b9c2e3d4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c",
		`<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==">`,
		"password=${DB_PASSWORD}",
		"export API_KEY=<your-api-key>",
		"token: \"***\"",
		"postgres://app@db:5432/prod",
		"max_tokens=4096 tokenizer=cl100k_base password_min_length=12",
		"aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
		"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 user@laptop",
		"I reset my password yesterday and the login still fails.",
		"密码错误，请重试。",
		"kubectl get secret db-creds -o yaml",
		"Authorization header missing",
	} {
		if got := r.String(in); got != in {
			t.Errorf("%q was changed to %q", in, got)
		}
	}
}

func TestSameSecretSamePlaceholder(t *testing.T) {
	r := New(testKey, nil)
	a := r.String("psql postgres://app:hunter2@db:5432/prod")
	b := r.String("PGPASSWORD=hunter2 psql -h db")
	ha := a[strings.Index(a, "⟨"):strings.Index(a, "⟩")]
	if !strings.Contains(b, ha[strings.LastIndex(ha, ":"):]) {
		t.Fatalf("two mentions of one secret got different hashes: %q, %q", a, b)
	}
	if other := New([]byte("other key"), nil).String("psql postgres://app:hunter2@db:5432/prod"); other == a {
		t.Fatalf("the hash does not depend on the key: %q", other)
	}
	if !strings.HasPrefix(a, "psql postgres://app:⟨secret:password:") || !strings.HasSuffix(a, "⟩@db:5432/prod") {
		t.Fatalf("the lesson lost its shape: %q", a)
	}
}

func TestPersonalDataByPolicy(t *testing.T) {
	in := "Card 4111 1111 1111 1111, ID 11010519491231002X, SSN 123-45-6789, email dana.ruiz@example.com, phone 13812345678, host 10.0.3.4"
	got := New(testKey, nil).String(in)
	for _, gone := range []string{"4111 1111 1111 1111", "11010519491231002X", "123-45-6789"} {
		if strings.Contains(got, gone) {
			t.Errorf("default policy kept %q: %s", gone, got)
		}
	}
	for _, kept := range []string{"dana.ruiz@example.com", "13812345678", "10.0.3.4", "⟨card ending 1111⟩"} {
		if !strings.Contains(got, kept) {
			t.Errorf("default policy lost %q: %s", kept, got)
		}
	}
	addr, err := ParsePolicy("address=drop")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"Ship it to 410 Townsend St, Apt 5, San Francisco.", "寄到北京市朝阳区建国路88号1201室。", "Lieferung an Musterstraße 12 bitte."} {
		got := New(testKey, addr).String(in)
		if !strings.Contains(got, "⟨address⟩") {
			t.Errorf("address=drop kept the address in %q: %s", in, got)
		}
		if kept := New(testKey, nil).String(in); kept != in {
			t.Errorf("the default policy changed an address: %q → %q", in, kept)
		}
	}
	if got := New(testKey, addr).String("We moved 3 Big Boxes today and ran 12 tests."); strings.Contains(got, "⟨") {
		t.Errorf("not an address: %s", got)
	}
	p, err := ParsePolicy("email=mask, phone=drop, ip=drop, card=keep")
	if err != nil {
		t.Fatal(err)
	}
	got = New(testKey, p).String(in)
	for _, gone := range []string{"dana.ruiz", "13812345678", "10.0.3.4"} {
		if strings.Contains(got, gone) {
			t.Errorf("policy %s kept %q: %s", p, gone, got)
		}
	}
	if !strings.Contains(got, "4111 1111 1111 1111") || !strings.Contains(got, "@example.com⟩") {
		t.Errorf("policy %s: %s", p, got)
	}
	// Look-alikes: a Luhn-invalid number, an ID with a wrong check digit.
	for _, in := range []string{"order 4111 1111 1111 1112", "110105194912310021", "000-12-3456"} {
		if got := New(testKey, nil).String(in); got != in {
			t.Errorf("%q was changed to %q", in, got)
		}
	}
	if _, err := ParsePolicy("passport=mask"); err == nil || !strings.Contains(err.Error(), "email, phone, address") {
		t.Errorf("an unknown class: %v", err)
	}
}
