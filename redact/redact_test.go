package redact

import (
	"slices"
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
		{`"signing_key": "q8Z2xLm4Np6Rs8Tv0Wb2Yd4Fh6Jk8"`, "q8Z2xLm4Np6Rs8Tv0Wb2Yd4Fh6Jk8", "key"},
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
	for _, kept := range []string{"dana.ruiz@example.com", "13812345678", "10.0.3.4", "⟨card ending 1111~"} {
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
		if !strings.Contains(got, "⟨address~") {
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
	if !strings.Contains(got, "4111 1111 1111 1111") || !strings.Contains(got, "@example.com~") {
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

// TestSecretShapes puts each shape of secret the earlier detectors let
// through (issue 37) into text, with values of its own: none survives,
// and redacting again changes nothing.
func TestSecretShapes(t *testing.T) {
	r := New(testKey, nil)
	for _, c := range []struct{ shape, in, secret string }{
		{"inline assignment", "PGPASSWORD='Zq8!vR2p' psql -h db.internal -U app", "Zq8!vR2p"},
		{"inline assignment", "cd /srv && SMTP_PASS=Kw9-xLq2 ./send.sh", "Kw9-xLq2"},
		{"inline assignment in JSON", `{"command":"PGPASSWORD=Hy7#kPz1 psql -h db -c 'select 1'"}`, "Hy7#kPz1"},
		{"inline assignment in JSON", `{"cmd": "env REDISCLI_AUTH=qT4vB8nM2x redis-cli ping"}`, "qT4vB8nM2x"},
		{"name with extra words", "PRIMARY_DB_PASSWORD=Lm3Qz8wR", "Lm3Qz8wR"},
		{"name with extra words", "GITHUB_TOKEN_PROD=Wq7zLm2Xp9Rt", "Wq7zLm2Xp9Rt"},
		{"name with extra words", "api_key_v2: 'Hn4qX8zLm2Wp6Rt0'", "Hn4qX8zLm2Wp6Rt0"},
		{"name with extra words", "replica_read_only_passwd = 'Vt6#nB1q'", "Vt6#nB1q"},
		{"name with extra words", `billingServiceApiToken: "tK7mQ2zX9pL4"`, "tK7mQ2zX9pL4"},
		{"first character $", "DB_PASSWORD=$ecretP4ss!", "$ecretP4ss!"},
		{"first character %", "smtp_password: %Kq9zT2!m", "%Kq9zT2!m"},
		{"first character [", "LDAP_PASSWORD=[Zx7qL2p]m", "[Zx7qL2p]m"},
		{"first character {", `"password": "{Vb2nQ8x"`, "{Vb2nQ8x"},
		{"first character <", "ADMIN_PASSWORD=<Mn4!kq9Z", "<Mn4!kq9Z"},
		{"placeholder words inside", "API_TOKEN=yourQ8zLx2Here9", "yourQ8zLx2Here9"},
		{"placeholder words inside", "password: Example7Kq!", "Example7Kq!"},
		{"forged ⟨…⟩", "export DB_PASSWORD='⟨Rt5!kQ9z⟩'", "Rt5!kQ9z"},
		{"forged ⟨…⟩", "use ⟨secret:password:12345678⟩ as the PIN", "12345678"},
		{"forged ⟨…⟩", "token ⟨secret:token:abcdef12~00000000⟩ here", "abcdef12"},
		{"dotted provider token", "SENDGRID_KEY=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", "SG.q3Zb7LmN1xR4tV8wY2cE5f"},
		{"dotted provider token", "sent with 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", "SG.Az9Bx8Cy7Dw6Ev5Fu4Gt3H"},
		{"curl -u", "curl -s -u deploy:Pq7!zLx2 https://ci.internal/api", "Pq7!zLx2"},
		{"curl -u", "curl --user=ops:Mz8qW1eR -X POST https://ci.internal/job", "Mz8qW1eR"},
		{"npm token", "NPM_TOKEN=npm_Zq8Lx2Vb7Np4Kt1Rm6Wc3Yd9Fh5Gj0Hs2Au4B", "npm_Zq8Lx2Vb7Np4Kt1Rm6Wc3Yd9Fh5Gj0Hs2Au4B"},
		{"npm _authToken", "//npm.example.com/:_authToken=e8Kq2Lz7Vn4Xb9Mc1Rt6Wy3", "e8Kq2Lz7Vn4Xb9Mc1Rt6Wy3"},
		{"Docker Hub token", "DOCKERHUB_TOKEN=dckr_pat_Q2xZ8Lm4Np6Rs8Tv0Wb2Yd4Fh6", "dckr_pat_Q2xZ8Lm4Np6Rs8Tv0Wb2Yd4Fh6"},
		{"docker login -p", "docker login -u me -p Hx8mQz2Lp registry.example.net", "Hx8mQz2Lp"},
		{"Vault token", "vault login hvs.CAESIJq8Lx2Vb7Np4Kt1Rm6Wc3Y", "hvs.CAESIJq8Lx2Vb7Np4Kt1Rm6Wc3Y"},
		{"password in prose", "my github password is Grape77!lemon, don't share it", "Grape77!lemon"},
		{"secret in prose", "the secret is Vr7#pLq2Zx9! for the webhook", "Vr7#pLq2Zx9!"},
		{"AWS secret in prose", "the AWS secret is Zx8Lm2Np6Rt0Vw3Yb7Cd1Ef5Gh9Jk2Mn4Pq8Rs1T and the key is in the ticket", "Zx8Lm2Np6Rt0Vw3Yb7Cd1Ef5Gh9Jk2Mn4Pq8Rs1T"},
		{"password in prose", "I changed the wifi password to Blue42!sky yesterday", "Blue42!sky"},
		{"password in prose", "set the root password to Kq8#zLp2 on the box", "Kq8#zLp2"},
		{"password in Chinese prose", "服务器密码改成了 Qw8!zx21，别外传", "Qw8!zx21"},
		{"echo into --password-stdin", "echo Tb4!nQ8zLx | docker login ghcr.io -u me --password-stdin", "Tb4!nQ8zLx"},
		{"htpasswd -b", "htpasswd -bc /etc/nginx/.htpasswd alice Ro9#vLq2", "Ro9#vLq2"},
	} {
		got := r.String(c.in)
		if strings.Contains(got, c.secret) {
			t.Errorf("%s: %q → %q: the secret is still there", c.shape, c.in, got)
		}
		if again := r.String(got); again != got {
			t.Errorf("%s: redacting twice changed %q to %q", c.shape, got, again)
		}
	}
	for _, in := range []string{
		"the secret is to test on staging first",
		"The password is in the shared vault; ask Ahmed.",
		"curl -u admin https://ci.internal/api   # asks for the password",
		"docker login -u ci -p \"$REGISTRY_TOKEN\" registry.example.net",
		"npm_config_loglevel=warn npm ci",
		"see SG.2 of the runbook for the escalation path",
		"docker run --user 1000:1000 alpine id",
		"PASSWORD_MIN_LENGTH=14",
		"TOKEN_BUCKET_PROD=refill-hourly",
		"password_reset_v2=enabled",
		"API_KEY=your-api-key-here",
		"token: ${{ secrets.NPM_TOKEN }}",
		"reset your password at https://id.example.org/reset",
		"vault kv get -field=password kv/app/db",
		// Code: an unquoted value is an expression, a key's value in
		// lower-case words a sentinel, a prefix alone no key.
		"const apiKey = await clack.password({ message: 'Paste it' })",
		"for _, token := range identifierBoundary.Split(s, -1) {",
		"litellmApiKey: isLiteLLM ? baseUrl : undefined,",
		"env.CODEMIE_API_KEY = apiKeyValue;",
		"env.OPENAI_API_KEY = 'proxy-handled';",
		"const apiKey = 'sk-ant-' + 'a'.repeat(95);",
		"if (key.includes('token') || key.includes('secret')) { mask(value) }",
		"const oldSession = '~/.codex/sessions/2025/12/31/rollout-*.jsonl';",
		// Prose about secrets, in markdown and JSON-escaped text.
		"- ✅ Build passes (TypeScript clean)",
		"**Token data IS available** for cloud providers",
		`### Session 1: Token Data Discovery\n- **Session ID**: ` + "`019b7f07-4a68-7d10-a8ef-8454269f439d`",
		"Now I need to update the commit step to pass TokenUsage to WriteCommitted.",
		`Support SSO and API key authentication\n5. Integrate with the CLI`,
		"we need the token to GetUserProfile later",
		"the password to Prod2Db is in 1password",
		"the tokenizer was BertTokenizer2 before",
		"the secret key is in the vault, see kv/app/stripe",
		// A provider's shape inside a longer blob.
		"iVBORw0KGgoAAAANSUhEUgAA-kt9z_Qm3Lp9Vn2Kw8Rt4Zc6Hj1Ds5Fg0Mb3Nq7Xy-AAAElFTkSuQmCC",
	} {
		if got := r.String(in); got != in {
			t.Errorf("%q was changed to %q", in, got)
		}
	}
}

// TestPlaceholdersAreKeyed: a placeholder this key wrote is left alone;
// one another key wrote, one of an earlier version's form, or text in
// ⟨…⟩ that only looks like one, is read like any other text and
// replaced.
func TestPlaceholdersAreKeyed(t *testing.T) {
	r := New(testKey, nil)
	ours := r.String("DB_PASSWORD=Tr0ub4dor&3")
	if !strings.Contains(ours, "~") || r.String(ours) != ours {
		t.Fatalf("our own placeholder: %q, then %q", ours, r.String(ours))
	}
	theirs := New([]byte("another deployment's key"), nil).String("DB_PASSWORD=Tr0ub4dor&3")
	if got := r.String(theirs); got == theirs || !strings.Contains(got, "⟨secret:password:") {
		t.Fatalf("another key's placeholder was left alone: %q", got)
	}
	// An earlier version's placeholder keeps its kind, becomes this key's,
	// and two mentions of it stay alike.
	earlier := "connect with postgres://app:⟨secret:password:1f9c2a7b⟩@db:5432/prod"
	a, b := r.String(earlier), r.String(earlier+" again")
	if a == earlier || !strings.HasPrefix(a, "connect with postgres://app:⟨secret:password:") || !strings.HasPrefix(b, a) {
		t.Fatalf("an earlier placeholder: %q, %q", a, b)
	}
	// A masked personal datum is this key's too.
	masked := New(testKey, Policy{ClassEmail: Mask}).String("mail dana@example.com")
	if again := New(testKey, Policy{ClassEmail: Mask}).String(masked); again != masked {
		t.Fatalf("a masked email was masked again: %q → %q", masked, again)
	}
}

// TestHints: every name the assignment rules take for a secret's, and
// every noun of the prose rules, holds one of the hints that decide
// where they look.
func TestHints(t *testing.T) {
	var names []string
	for _, m := range []map[string]bool{strongHeads, weakHeads} {
		for w := range m {
			names = append(names, w)
		}
	}
	for _, n := range append(names, "PGPASSWORD", "clientSecret", "APIKey", "contraseña", "db_pwd") {
		if secretName(n) == notSecret {
			t.Errorf("%s is no secret's name", n)
		}
		if !slices.ContainsFunc(nameHints, func(h string) bool { return strings.Contains(asciiLower(n), h) }) {
			t.Errorf("no name hint in %q", n)
		}
	}
	// The nouns' alternatives at the top level (a group's own
	// alternatives share the group's hint).
	var nouns []string
	depth, from := 0, 0
	for i, c := range secretNouns + "|" {
		switch {
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '|' && depth == 0:
			nouns = append(nouns, secretNouns[from:i])
			from = i + 1
		}
	}
	for _, n := range nouns {
		if !slices.ContainsFunc(nounHints, func(h string) bool { return strings.Contains(strings.ToLower(n), h) }) {
			t.Errorf("no noun hint in %q", n)
		}
	}
}
