package redact

import (
	"encoding/base64"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ClassSecret is the class of every secret.
const ClassSecret = "secret"

// detector finds one kind of secret or personal data: re matches, group
// is the submatch that holds the value (0: all of it), and valid, when
// set, rejects look-alikes the expression cannot.
type detector struct {
	kind, class string
	re          *regexp.Regexp
	group       int // -1: the first submatch that matched
	valid       func(v string) bool
	// nameGroup, when set, is the submatch of the name a value is assigned
	// to, and secretValue decides from both (secretNamed).
	nameGroup   int
	secretValue func(name, v string) bool
}

var detectors = []detector{
	// Private keys first: a PEM block holds base64 that would otherwise
	// look like other things. Written out, or on one line with \n escapes
	// as JSON tool output has it.
	{kind: "private-key", class: ClassSecret, re: regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`), valid: notTemplateKey},
	{kind: "anthropic-key", class: ClassSecret, re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9]+-[A-Za-z0-9_-]{20,}`)},
	{kind: "openai-key", class: ClassSecret, re: regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`), valid: mixed},
	{kind: "aws-access-key", class: ClassSecret, re: regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b`), valid: notExample},
	{kind: "github-token", class: ClassSecret, re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b`)},
	{kind: "gitlab-token", class: ClassSecret, re: regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`)},
	{kind: "slack-token", class: ClassSecret, re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},
	{kind: "slack-webhook", class: ClassSecret, re: regexp.MustCompile(`https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/([A-Za-z0-9]{16,})`), group: 1},
	{kind: "stripe-key", class: ClassSecret, re: regexp.MustCompile(`\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}`)},
	{kind: "google-api-key", class: ClassSecret, re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{kind: "google-oauth-secret", class: ClassSecret, re: regexp.MustCompile(`\bGOCSPX-[A-Za-z0-9_-]{20,}`)},
	{kind: "jwt", class: ClassSecret, re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
	// An AWS secret key: 40 characters of base64 after a name that says so.
	{kind: "aws-secret-key", class: ClassSecret, re: regexp.MustCompile(`(?i:(?:aws[ _]?)?secret(?:[ _]?access)?[ _]?key|secretaccesskey)(?:\s*\[[^\]]*\])?["']?\s*[:=：]\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`), group: 1, valid: notPlaceholder},
	// Authorization headers and bearer tokens.
	{kind: "bearer-token", class: ClassSecret, re: regexp.MustCompile(`(?i:\b(?:bearer|token|basic)\s+)([A-Za-z0-9._~+/-]{16,}=*)`), group: 1, valid: bearerValid},
	{kind: "api-key-header", class: ClassSecret, re: regexp.MustCompile(`(?i:\bx-(?:api|auth)-(?:key|token)["']?\s*[:=]\s*["']?)([^\s"',;]{12,})`), group: 1, valid: notPlaceholder},
	// A password in a URL or connection string: scheme://user:PASSWORD@host.
	{kind: "password", class: ClassSecret, re: regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'"]*:([^@\s/'"]+)@`), group: 1, valid: notPlaceholder},
	// Password flags of the tools that take one: mysql -pSECRET, redis-cli
	// -a SECRET, sshpass -p SECRET.
	{kind: "password", class: ClassSecret, re: regexp.MustCompile(`\b(?:mysql|mysqldump|mariadb|mysqladmin)\b[^|;&\n]*?\s-p([^\s'"]{4,})|\bredis-cli\b[^|;&\n]*?\s-a\s+['"]?([^\s'"]{4,})|\bsshpass\s+-p\s*['"]?([^\s'"]{4,})`), group: -1, valid: notPlaceholder},
	// Assignments and flags whose name says secret: password=…, "api_key":
	// "…", --password …, PGPASSWORD=…, 密码：….
	// A value assigned to a name that says secret: password=…, "api_key":
	// "…", DB_PASSWORD=…, --password …, hmac_key = "…", appSecret 是 ….
	{kind: "password", class: ClassSecret, re: regexp.MustCompile(`(?:^|[^A-Za-z0-9_])([A-Za-z][A-Za-z0-9_.-]*)["']?\s*(?:=|:|=>|：|\s是|\s为)\s*["'“]?([^\s"'”,;)}\]，。；]{4,})`), group: 2, nameGroup: 1, secretValue: secretNamed},
	{kind: "password", class: ClassSecret, re: regexp.MustCompile(`(?:^|\s)--?([A-Za-z][A-Za-z0-9_-]*)(?:=|\s+)["']?([^\s"',;]{4,})`), group: 2, nameGroup: 1, secretValue: secretNamed},
	{kind: "password", class: ClassSecret, re: regexp.MustCompile(`(?i:\b(?:password|passwd|passphrase|pwd)\s+(?:is\s+|was\s+|of\s+)?)["'“]?([^\s"'”,;]{6,})`), group: 1, valid: func(v string) bool { return mixed(v) && notPlaceholder(v) }},
	{kind: "password", class: ClassSecret, re: regexp.MustCompile(`(?:密码|口令|密钥|令牌|秘钥)["'”]?\s*(?:是|为|[:：=])\s*["'“]?([^\s"'”，。,;；]{4,})`), group: 1, valid: notPlaceholder},

	// Personal data.
	{kind: "card", class: ClassCard, re: regexp.MustCompile(`\b(?:4\d{3}|5[1-5]\d{2}|2[2-7]\d{2}|3[47]\d{2}|6(?:011|5\d{2}|2\d{2}))(?:[ -]?\d){9,15}\b`), valid: luhn},
	{kind: "national-id", class: ClassNationalID, re: regexp.MustCompile(`\b[1-9]\d{5}(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx]\b`), valid: chineseID},
	{kind: "ssn", class: ClassNationalID, re: regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b`), valid: ssn},
	{kind: "email", class: ClassEmail, re: regexp.MustCompile(`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b`)},
	{kind: "phone", class: ClassPhone, re: regexp.MustCompile(`(?:\+\d{1,3}[ -]?)?(?:\(\d{2,4}\)[ -]?)?\b1[3-9]\d{9}\b|\+\d{1,3}[ -]?\(?\d{1,4}\)?(?:[ -]?\d{2,4}){2,4}\b`)},
	// Postal addresses: a house number and a street ("410 Townsend St",
	// "12 rue de la Paix", "Musterstraße 12"), or a Chinese address down to
	// the house number (北京市朝阳区建国路88号).
	{kind: "address", class: ClassAddress, re: regexp.MustCompile(`\b\d{1,5}[A-Za-z]?\s+(?:[A-Z][a-z]+\.?\s+){1,4}(?:St|Street|Ave|Avenue|Rd|Road|Blvd|Boulevard|Ln|Lane|Dr|Drive|Ct|Court|Way|Pl|Place|Sq|Square|Terrace|Hwy|Highway)\b\.?(?:,?\s+(?:Apt|Suite|Unit|Fl|Floor)\.?\s*\w+)?|\b\d{1,5}\s+(?:rue|avenue|boulevard|place|chemin)\s+(?:\p{L}+\s){0,4}\p{L}+|\b\p{Lu}\p{Ll}+(?:straße|strasse|weg|gasse|allee|platz)\s+\d{1,4}[a-z]?\b|(?:\p{Han}{2,6}(?:省|市|自治区))?\p{Han}{2,6}(?:市|区|县)\p{Han}{1,12}(?:路|街|道|巷|里)\d{1,5}号(?:\d{1,4}(?:室|楼|栋|单元))*`)},
	{kind: "ip", class: ClassIP, re: regexp.MustCompile(`\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b`)},
}

// Find returns the secrets and personal data in text, in order, without
// overlaps: where two detectors match the same bytes, the earlier in the
// list (secrets before personal data) wins.
func Find(text string) []Finding {
	var out []Finding
	// Placeholders of an earlier redaction are never found again.
	var held [][]int
	if strings.ContainsRune(text, '⟨') {
		held = placeholderRE.FindAllStringIndex(text, -1)
	}
	taken := func(s, e int) bool {
		return slices.ContainsFunc(out, func(f Finding) bool { return s < f.End && f.Start < e }) ||
			slices.ContainsFunc(held, func(h []int) bool { return s < h[1] && h[0] < e })
	}
	for _, d := range detectors {
		for _, m := range d.re.FindAllStringSubmatchIndex(text, -1) {
			g := d.group
			if g < 0 {
				for g = 1; g < len(m)/2-1 && m[2*g] < 0; g++ {
				}
			}
			s, e := m[2*g], m[2*g+1]
			if s < 0 {
				continue
			}
			v := text[s:e]
			if d.valid != nil && !d.valid(v) || taken(s, e) || d.class == ClassSecret && (documented(v) || maskRunRE.MatchString(v)) {
				continue
			}
			if d.secretValue != nil && !d.secretValue(text[m[2*d.nameGroup]:m[2*d.nameGroup+1]], v) {
				continue
			}
			out = append(out, Finding{Kind: d.kind, Class: d.class, Start: s, End: e})
		}
	}
	slices.SortFunc(out, func(a, b Finding) int { return a.Start - b.Start })
	return out
}

// maskRunRE is a run of mask characters: a value shown masked.
var maskRunRE = regexp.MustCompile(`[xX*•#]{6,}`)

// placeholderRE is a placeholder Redact writes.
var placeholderRE = regexp.MustCompile(`⟨[^⟨⟩]*⟩`)

// notPlaceholder rejects values that stand for a secret rather than being
// one: ${VAR}, $VAR, <your-password>, ***, xxxx, %s, and the name of the
// thing itself.
func notPlaceholder(v string) bool {
	v = strings.Trim(v, `"'`)
	switch {
	case v == "":
		return false
	case strings.HasPrefix(v, "$"), strings.HasPrefix(v, "<"), strings.HasPrefix(v, "%"), strings.HasPrefix(v, "{"), strings.HasPrefix(v, "⟨"), strings.HasPrefix(v, "-----"):
		return false
	}
	low := strings.ToLower(v)
	if strings.Trim(low, "*x.•#-_") == "" || strings.HasPrefix(v, "[") || strings.Contains(v, "...") || strings.Contains(v, "…") {
		return false
	}
	for _, w := range []string{"your", "replace", "example", "placeholder", "dummy", "redacted", "changeme", "here"} {
		if strings.Contains(low, w) {
			return false
		}
	}
	if maskRunRE.MatchString(v) {
		return false
	}
	if slices.Contains(placeholders, low) || strings.HasPrefix(low, "your") || strings.HasPrefix(low, "my-") || strings.HasSuffix(low, "()") {
		return false
	}
	return true
}

// placeholders are words that stand in for a secret, or say something
// about it, rather than being one.
var placeholders = []string{"password", "passwd", "secret", "token", "redacted", "changeme", "example", "placeholder",
	"none", "null", "nil", "true", "false", "required", "missing", "invalid", "expired", "incorrect", "wrong", "reset", "hidden"}

// mixed accepts a token with both letters and digits: real keys have both;
// "sk-and-more-words-like-this" does not.
func mixed(v string) bool {
	var letter, digit bool
	for _, r := range v {
		letter = letter || unicode.IsLetter(r)
		digit = digit || unicode.IsDigit(r)
	}
	return letter && digit
}

// notExample rejects AWS's documented example key.
func notExample(v string) bool { return !strings.HasSuffix(v, "EXAMPLE") }

// highEntropy accepts a random-looking value: mixed case or digits, not
// all hex (digests and IDs are), and at least 3.5 bits of entropy per
// character.
func highEntropy(v string) bool {
	if !mixed(v) || isHex(strings.Trim(v, "=")) {
		return false
	}
	var upper, lower bool
	for _, r := range v {
		upper = upper || unicode.IsUpper(r)
		lower = lower || unicode.IsLower(r)
	}
	return upper && lower && entropy(v) >= 3.5
}

func isHex(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF-", r) {
			return false
		}
	}
	return true
}

func entropy(s string) float64 {
	counts := map[rune]int{}
	n := 0
	for _, r := range s {
		counts[r]++
		n++
	}
	h := 0.0
	for _, c := range counts {
		p := float64(c) / float64(n)
		h -= p * math.Log2(p)
	}
	return h
}

// luhn checks a card number's check digit.
func luhn(v string) bool {
	var digits []int
	for _, r := range v {
		if r >= '0' && r <= '9' {
			digits = append(digits, int(r-'0'))
		}
	}
	if len(digits) < 13 || len(digits) > 19 {
		return false
	}
	sum := 0
	for i := range digits {
		d := digits[len(digits)-1-i]
		if i%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// chineseID checks a resident identity card number's check character.
func chineseID(v string) bool {
	weights := []int{7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2}
	sum := 0
	for i, w := range weights {
		sum += int(v[i]-'0') * w
	}
	check := "10X98765432"[sum%11]
	last := v[17]
	if last == 'x' {
		last = 'X'
	}
	return last == check
}

// ssn rejects numbers the SSA never issues (area 000, 666, 9xx; group 00;
// serial 0000).
func ssn(v string) bool {
	area, group, serial := v[:3], v[4:6], v[7:]
	return area != "000" && area != "666" && area[0] != '9' && group != "00" && serial != "0000"
}

// SecretKinds lists the kinds of secret detected, in detection order.
func SecretKinds() []string {
	var out []string
	for _, d := range detectors {
		if d.class == ClassSecret && !slices.Contains(out, d.kind) {
			out = append(out, d.kind)
		}
	}
	return out
}

// secretNamed decides whether v, assigned to name, is a secret: the name's
// parts (split at _ . - and camelCase) hold a word that says secret
// (password, token, secret, api key, credentials: any real-looking value
// is one) or a weaker one (key, auth, salt, signature, hmac: only a
// random-looking value is), and none that says the value is about the
// secret rather than the secret (password_min_length, secret_key_path,
// nextPageToken, max_tokens).
func secretNamed(name, v string) bool {
	parts := nameParts(name)
	strong, weak := false, false
	for i, p := range parts {
		switch p {
		case "password", "passwd", "pwd", "pass", "passphrase", "secret", "token", "credential", "credentials", "apikey", "privatekey", "secretkey", "accesskey":
			strong = true
		case "key", "auth", "salt", "signature", "sig", "hmac":
			weak = true
		default:
			// Run together: PGPASSWORD, appsecret, authtoken.
			for _, w := range []string{"password", "passwd", "secret", "token", "apikey"} {
				strong = strong || strings.HasSuffix(p, w)
			}
		}
		if i+1 < len(parts) && parts[i+1] == "key" && (p == "api" || p == "access" || p == "private" || p == "signing" || p == "encryption" || p == "master") {
			strong = true
		}
		if aboutTheSecret[p] {
			return false
		}
	}
	if !strong && !weak || !notPlaceholder(v) || looksLikeCode(v) || documented(v) {
		return false
	}
	return strong || highEntropy(v)
}

// aboutTheSecret are name parts that say a value is about a secret, not
// the secret itself.
var aboutTheSecret = map[string]bool{
	"length": true, "len": true, "min": true, "max": true, "count": true, "limit": true, "file": true, "path": true,
	"url": true, "uri": true, "name": true, "type": true, "id": true, "ttl": true, "expiry": true, "expires": true,
	"expiration": true, "size": true, "format": true, "version": true, "prefix": true, "header": true, "env": true,
	"dir": true, "page": true, "next": true, "continuation": true, "cursor": true, "hint": true, "policy": true,
	"rotation": true, "field": true, "kind": true, "mode": true, "algorithm": true, "alg": true, "endpoint": true,
	"ref": true, "manager": true, "provider": true, "enabled": true, "required": true, "timeout": true, "usage": true,
	"sort": true, "partition": true, "primary": true, "foreign": true, "public": true, "pub": true, "fingerprint": true,
	"hash": true, "strength": true, "reset": true, "label": true, "template": true,
}

// nameParts splits an identifier into lower-case words.
func nameParts(name string) []string {
	var parts []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			parts = append(parts, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case r == '_' || r == '-' || r == '.':
			flush()
		case unicode.IsUpper(r) && i > 0 && unicode.IsLower(rs[i-1]):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return parts
}

var (
	// codeRE is a value that is code naming where a secret comes from:
	// os.environ["X"], getApiKey(), settings.SECRET_KEY, process.env.X.
	codeRE = regexp.MustCompile(`[(\[]|^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$`)
	// typeNames are values that are a type annotation (password: string).
	typeNames = map[string]bool{"string": true, "str": true, "int": true, "bool": true, "boolean": true, "number": true, "bytes": true, "any": true, "object": true, "secretstr": true}
)

func looksLikeCode(v string) bool { return codeRE.MatchString(v) || typeNames[strings.ToLower(v)] }

// documentedExamples are credentials published in documentation, which
// scanners allow: AWS's example keys, jwt.io's sample token, Stripe's docs
// key. Any value with AWS's EXAMPLE marker counts too.
var documentedExamples = []string{"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "sk_test_4eC39HqLyjWDarjtT1zdp7dc"}

func documented(v string) bool {
	return strings.Contains(v, "EXAMPLE") || slices.ContainsFunc(documentedExamples, func(e string) bool { return strings.Contains(v, e) })
}

// notTemplateKey rejects a PEM block whose body holds no key material
// ("<your key here>").
func notTemplateKey(v string) bool { return keyBodyRE.MatchString(v) }

var keyBodyRE = regexp.MustCompile(`-----(?:\\n|\s)+[A-Za-z0-9+/=]{16,}`)

// bearerValid accepts a token with letters and digits, unless it is Basic
// credentials that decode to a placeholder pair (user:password).
func bearerValid(v string) bool {
	if !mixed(v) {
		return false
	}
	if b, err := base64.StdEncoding.DecodeString(v); err == nil {
		if user, pass, ok := strings.Cut(string(b), ":"); ok && utf8.ValidString(user) {
			return notPlaceholder(pass) && !slices.Contains([]string{"pass", "admin", "1234", "secret"}, strings.ToLower(pass))
		}
	}
	return true
}
