package redact

import (
	"encoding/base64"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// ClassSecret is the class of every secret.
const ClassSecret = "secret"

// detector finds one kind of secret or personal data: re matches, group
// is the submatch that holds the value (0: all of it), and valid, when
// set, rejects look-alikes the expression cannot.
type detector struct {
	kind, class string
	// hints are words every match holds (in lower case): without one in
	// the text the expression does not run, which spares most texts
	// most expressions.
	hints []string
	re    *regexp.Regexp
	group int // -1: the first submatch that matched
	valid func(v string) bool
	// whole: the match is a whole token, not the middle of a longer run
	// of token characters (a base64 blob holds every short shape).
	whole bool
}

var detectors = []detector{
	// Private keys first: a PEM block holds base64 that would otherwise
	// look like other things. Written out, or on one line with \n escapes
	// as JSON tool output has it.
	{kind: "private-key", class: ClassSecret, hints: []string{"-----begin"}, re: regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`), valid: notTemplateKey},
	// Providers' tokens, by the shape each provider gives them: a prefix
	// and a body of its alphabet and length.
	{kind: "anthropic-key", class: ClassSecret, hints: []string{"sk-ant-"}, re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9]+-[A-Za-z0-9_-]{20,}`)},
	{kind: "openai-key", class: ClassSecret, hints: []string{"sk-"}, re: regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`), valid: mixed},
	{kind: "aws-access-key", class: ClassSecret, hints: []string{"akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa"}, re: regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b`), valid: notExample},
	{kind: "aws-session-token", class: ClassSecret, hints: []string{"iqojb3jpz2lux2vj", "fwogzxivyxdze"}, re: regexp.MustCompile(`\b(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE)[A-Za-z0-9/+=]{40,}`)},
	{kind: "github-token", class: ClassSecret, hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b`)},
	{kind: "gitlab-token", class: ClassSecret, hints: []string{"glpat-", "glptt-", "gldt-", "glrt-", "glcbt-", "glsoat-", "glft-", "glimt-", "glagent-"}, re: regexp.MustCompile(`\bgl(?:pat|ptt|dt|rt|cbt|soat|ft|imt|agent)-[A-Za-z0-9_-]{20,}`)},
	{kind: "slack-token", class: ClassSecret, hints: []string{"xox"}, re: regexp.MustCompile(`\bxox[abposre]-[A-Za-z0-9-]{10,}`)},
	{kind: "slack-webhook", class: ClassSecret, hints: []string{"hooks.slack.com"}, re: regexp.MustCompile(`https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/([A-Za-z0-9]{16,})`), group: 1},
	{kind: "stripe-key", class: ClassSecret, hints: []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"}, re: regexp.MustCompile(`\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9]{24,}`)},
	{kind: "google-api-key", class: ClassSecret, hints: []string{"aiza"}, re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{kind: "google-oauth-secret", class: ClassSecret, hints: []string{"gocspx-"}, re: regexp.MustCompile(`\bGOCSPX-[A-Za-z0-9_-]{20,}`)},
	{kind: "sendgrid-key", class: ClassSecret, hints: []string{"sg."}, re: regexp.MustCompile(`\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}`)},
	{kind: "npm-token", class: ClassSecret, hints: []string{"npm_"}, re: regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`)},
	{kind: "docker-token", class: ClassSecret, hints: []string{"dckr_"}, re: regexp.MustCompile(`\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{20,}`)},
	{kind: "vault-token", class: ClassSecret, hints: []string{"hvs.", "hvb.", "hvr."}, re: regexp.MustCompile(`\bhv[sbr]\.[A-Za-z0-9_-]{20,}`)},
	{kind: "huggingface-token", class: ClassSecret, hints: []string{"hf_"}, re: regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}\b`), valid: mixed},
	{kind: "pypi-token", class: ClassSecret, hints: []string{"pypi-age"}, re: regexp.MustCompile(`\bpypi-AgE[A-Za-z0-9_-]{50,}`)},
	{kind: "shopify-token", class: ClassSecret, hints: []string{"shpat_", "shpca_", "shppa_", "shpss_"}, re: regexp.MustCompile(`\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b`)},
	{kind: "atlassian-token", class: ClassSecret, hints: []string{"atatt3"}, re: regexp.MustCompile(`\bATATT3[A-Za-z0-9_=-]{40,}`)},
	{kind: "digitalocean-token", class: ClassSecret, hints: []string{"_v1_"}, re: regexp.MustCompile(`\bdo[opr]_v1_[a-f0-9]{64}\b`)},
	{kind: "databricks-token", class: ClassSecret, hints: []string{"dapi"}, re: regexp.MustCompile(`\bdapi[a-f0-9]{32}(?:-\d)?\b`)},
	{kind: "doppler-token", class: ClassSecret, hints: []string{"dp."}, re: regexp.MustCompile(`\bdp\.(?:st|ct|pt|sa|scim|audit)\.[A-Za-z0-9._-]{20,}`)},
	{kind: "pulumi-token", class: ClassSecret, hints: []string{"pul-"}, re: regexp.MustCompile(`\bpul-[a-f0-9]{40}\b`)},
	{kind: "terraform-token", class: ClassSecret, hints: []string{".atlasv1."}, re: regexp.MustCompile(`\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}`)},
	{kind: "postman-key", class: ClassSecret, hints: []string{"pmak-"}, re: regexp.MustCompile(`\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b`)},
	{kind: "grafana-token", class: ClassSecret, hints: []string{"glsa_", "glc_"}, re: regexp.MustCompile(`\bgl(?:sa|c)_[A-Za-z0-9_+/=]{32,}`)},
	{kind: "newrelic-key", class: ClassSecret, hints: []string{"nrak-", "nrii-", "nrjs-"}, re: regexp.MustCompile(`\bNR(?:AK|II|JS)-[A-Z0-9]{27}\b`)},
	{kind: "mailgun-key", class: ClassSecret, hints: []string{"key-"}, re: regexp.MustCompile(`\bkey-[a-f0-9]{32}\b`)},
	{kind: "brevo-key", class: ClassSecret, hints: []string{"xkeysib-"}, re: regexp.MustCompile(`\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}\b`)},
	{kind: "square-token", class: ClassSecret, hints: []string{"sq0", "eaaa"}, re: regexp.MustCompile(`\bsq0(?:atp|csp)-[A-Za-z0-9_-]{22,}|\bEAAA[A-Za-z0-9_-]{56,}`)},
	{kind: "telegram-token", class: ClassSecret, hints: []string{":aa"}, re: regexp.MustCompile(`\b\d{8,10}:AA[A-Za-z0-9_-]{32,}`)},
	{kind: "discord-token", class: ClassSecret, re: regexp.MustCompile(`\b[MN][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b`), valid: mixed},
	{kind: "mapbox-token", class: ClassSecret, hints: []string{"sk.eyj"}, re: regexp.MustCompile(`\bsk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{16,}`)},
	{kind: "linear-key", class: ClassSecret, hints: []string{"lin_"}, re: regexp.MustCompile(`\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b`)},
	{kind: "notion-token", class: ClassSecret, hints: []string{"secret_", "ntn_"}, re: regexp.MustCompile(`\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})\b`), valid: mixed},
	{kind: "fly-token", class: ClassSecret, hints: []string{"fo1_", "fm2_"}, re: regexp.MustCompile(`\bfo1_[A-Za-z0-9_-]{40,}|\bfm2_[A-Za-z0-9+/=_-]{40,}`)},
	{kind: "sentry-dsn", class: ClassSecret, hints: []string{"sentry.io"}, re: regexp.MustCompile(`://([0-9a-f]{32})(?::[0-9a-f]{32})?@[a-z0-9.-]*sentry\.io`), group: 1},
	// A token of a provider without a rule here: a short lower-case
	// prefix and a separator, then a random body of upper and lower case
	// and digits (abc_…, xyz-…), as providers now shape them.
	{kind: "token", class: ClassSecret, re: regexp.MustCompile(`\b([a-z][a-z0-9]{1,7}(?:_[a-z0-9]{1,6})?_)([A-Za-z0-9]{28,})\b`), group: 0, valid: prefixedToken, whole: true},
	{kind: "jwt", class: ClassSecret, hints: []string{"eyj"}, re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
	// An AWS secret key: 40 characters of base64 after a name that says so.
	{kind: "aws-secret-key", class: ClassSecret, hints: []string{"secret"}, re: regexp.MustCompile(`(?i:(?:aws[ _]?)?secret(?:[ _]?access)?[ _]?key|secretaccesskey)(?:\s*\[[^\]]*\])?["']?\s*[:=：]?\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`), group: 1, valid: notPlaceholder},
	// Authorization headers and bearer tokens.
	{kind: "bearer-token", class: ClassSecret, hints: []string{"bearer", "token", "basic"}, re: regexp.MustCompile(`(?i:\b(?:bearer|token|basic)\s+)([A-Za-z0-9._~+/-]{16,}=*)`), group: 1, valid: bearerValid},
	{kind: "api-key-header", class: ClassSecret, hints: []string{"x-api-", "x-auth-"}, re: regexp.MustCompile(`(?i:\bx-(?:api|auth)-(?:key|token)["']?\s*[:=]\s*["']?)([^\s"',;]{12,})`), group: 1, valid: notPlaceholder},
	// A password in a URL or connection string: scheme://user:PASSWORD@host,
	// whatever its characters; and a token as a URL's user
	// (https://TOKEN@host).
	{kind: "password", class: ClassSecret, hints: []string{"://"}, re: regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'"]*:([^\s/'"]+)@[A-Za-z0-9\[]`), group: 1, valid: urlPassword},
	{kind: "token", class: ClassSecret, hints: []string{"://"}, re: regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]*://([A-Za-z0-9_-]{20,})@[A-Za-z0-9]`), group: 1, valid: func(v string) bool { return highEntropy(v) || isHex(v) && len(v) >= 32 }},

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
// overlaps: where two detectors match the same bytes, the earlier (secrets
// before personal data) wins. Placeholders this redactor wrote are never
// found again; text in ⟨…⟩ that it did not write is read like any other,
// and a forged or earlier placeholder of its secret form is a finding
// itself.
func (r *Redactor) Find(text string) []Finding {
	var out []Finding
	var held [][]int
	if strings.ContainsRune(text, '⟨') {
		for _, m := range placeholderRE.FindAllStringSubmatchIndex(text, -1) {
			switch {
			case r.ours(text[m[2]:m[3]], text[m[4]:m[5]]):
				held = append(held, m[:2])
			case strings.HasPrefix(text[m[2]:m[3]], "secret:"):
				out = append(out, Finding{Kind: claimedKind(text[m[2]:m[3]]), Class: ClassSecret, Start: m[0], End: m[1]})
			}
		}
		for _, m := range legacyPlaceholderRE.FindAllStringSubmatchIndex(text, -1) {
			if !overlaps(out, held, m[0], m[1]) {
				out = append(out, Finding{Kind: claimedKind("secret:" + text[m[2]:m[3]] + ":"), Class: ClassSecret, Start: m[0], End: m[1]})
			}
		}
	}
	add := func(kind, class string, s, e int) {
		v := text[s:e]
		if e <= s || overlaps(out, held, s, e) || class == ClassSecret && (documented(v) || maskRunRE.MatchString(v)) {
			return
		}
		out = append(out, Finding{Kind: kind, Class: class, Start: s, End: e})
	}
	addSecret := func(kind string, s, e int) { add(kind, ClassSecret, s, e) }
	lower := asciiLower(text)
	run := func(ds []detector) {
		for _, d := range ds {
			if len(d.hints) > 0 && !slices.ContainsFunc(d.hints, func(h string) bool { return strings.Contains(lower, h) }) {
				continue
			}
			for _, m := range d.re.FindAllStringSubmatchIndex(text, -1) {
				g := d.group
				if g < 0 {
					for g = 1; g < len(m)/2-1 && m[2*g] < 0; g++ {
					}
				}
				s, e := m[2*g], m[2*g+1]
				if s < 0 || d.valid != nil && !d.valid(text[s:e]) || d.whole && !wholeToken(text, m[0], m[1]) {
					continue
				}
				add(d.kind, d.class, s, e)
			}
		}
	}
	i := slices.IndexFunc(detectors, func(d detector) bool { return d.class != ClassSecret })
	run(detectors[:i])
	// By structure: passwords on command lines, values of names that say
	// secret, secrets stated in words.
	findCommands(text, lower, addSecret)
	findAssignments(text, lower, addSecret)
	findProse(text, lower, addSecret)
	run(detectors[i:])
	slices.SortFunc(out, func(a, b Finding) int { return a.Start - b.Start })
	return out
}

// Find is Redactor.Find for a redactor that holds no placeholder as its
// own.
func Find(text string) []Finding { return (&Redactor{}).Find(text) }

// asciiLower is s with ASCII letters in lower case, byte for byte, so
// that offsets in it are offsets in s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// windows are the stretches of text around each hint found in lower
// (the text from the white space before the hint's word to after bytes
// past it, and on to the next white space), merged where they overlap,
// so that an expression runs on what may hold a match rather than on all
// of a long text. An expression whose match opens with the hint's word
// finds the same in the windows as in the text.
func windows(lower string, hints []string, after int) [][2]int {
	var ws [][2]int
	for _, h := range hints {
		for i := 0; ; {
			j := strings.Index(lower[i:], h)
			if j < 0 {
				break
			}
			at := i + j
			ws = append(ws, [2]int{spaceBefore(lower, at), spaceAfter(lower, min(len(lower), at+len(h)+after))})
			i = at + len(h)
		}
	}
	slices.SortFunc(ws, func(a, b [2]int) int { return a[0] - b[0] })
	var out [][2]int
	for _, w := range ws {
		if n := len(out); n > 0 && w[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], w[1])
			continue
		}
		out = append(out, w)
	}
	return out
}

// spaceBefore is where the white space before i is (the start of the
// text, or at most 256 bytes back).
func spaceBefore(s string, i int) int {
	j := i
	for ; j > 0 && i-j < 256; j-- {
		if c := s[j-1]; c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			return j - 1
		}
	}
	for j > 0 && !utf8.RuneStart(s[j]) {
		j--
	}
	return j
}

// spaceAfter is where the white space at or after i is (the end of the
// text, or at most 1024 bytes on).
func spaceAfter(s string, i int) int {
	for j := i; j < len(s) && j-i < 1024; j++ {
		if c := s[j]; c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			return j
		}
	}
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

// findIn runs re over the windows of text around hints (see windows) and
// calls fn with each match's submatch indices, as offsets in text.
func findIn(re *regexp.Regexp, text, lower string, hints []string, after int, fn func(m []int)) {
	for _, w := range windows(lower, hints, after) {
		for _, m := range re.FindAllStringSubmatchIndex(text[w[0]:w[1]], -1) {
			for k := range m {
				if m[k] >= 0 {
					m[k] += w[0]
				}
			}
			fn(m)
		}
	}
}

// wholeToken reports whether text[s:e] stands apart from the characters
// of base64 and tokens around it.
func wholeToken(text string, s, e int) bool {
	const tokenChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-"
	return (s == 0 || strings.IndexByte(tokenChars, text[s-1]) < 0) && (e == len(text) || strings.IndexByte(tokenChars, text[e]) < 0)
}

// overlaps reports whether s..e overlaps a finding or a held placeholder.
func overlaps(out []Finding, held [][]int, s, e int) bool {
	return slices.ContainsFunc(out, func(f Finding) bool { return s < f.End && f.Start < e }) ||
		slices.ContainsFunc(held, func(h []int) bool { return s < h[1] && h[0] < e })
}

// claimedKind is the kind a ⟨secret:KIND:…⟩ placeholder claims, when it
// is one of ours, else "placeholder".
func claimedKind(body string) string {
	parts := strings.SplitN(body, ":", 3)
	if len(parts) >= 2 && slices.Contains(secretKinds(), parts[1]) {
		return parts[1]
	}
	return "placeholder"
}

var (
	// placeholderRE is a placeholder of the keyed form Redact writes:
	// ⟨BODY~TAG⟩, TAG a keyed hash of BODY.
	placeholderRE = regexp.MustCompile(`⟨([^⟨⟩~\n]{1,200})~([0-9a-f]{8})⟩`)
	// legacyPlaceholderRE is a secret's placeholder as earlier versions
	// wrote it, without a tag: ⟨secret:KIND:HASH⟩.
	legacyPlaceholderRE = regexp.MustCompile(`⟨secret:([a-z0-9-]{1,40}):[0-9a-f]{8}⟩`)
)

// prefixedToken accepts a provider-shaped token without a rule of its
// own: a prefix that no digest or ID uses, and a body random in upper and
// lower case and digits.
func prefixedToken(v string) bool {
	i := strings.LastIndexByte(v, '_')
	prefix, body := v[:i+1], v[i+1:]
	first, _, _ := strings.Cut(prefix, "_")
	switch first {
	// Digests, IDs, and publishable keys, which are public.
	case "sha", "sha1", "sha256", "sha512", "md5", "uuid", "id", "build", "commit", "rev", "data", "img", "tmp", "file", "user", "pod", "node", "pk", "pub", "public":
		return false
	}
	_, lower, upper, digit, _ := classes(body)
	return lower && upper && digit && entropy(body) >= 4
}

// urlPassword accepts the password of a URL unless it stands for one.
func urlPassword(v string) bool {
	return notPlaceholder(v) && !strings.HasPrefix(v, "$") && !strings.HasPrefix(v, "{")
}

// notExample rejects AWS's documented example key.
func notExample(v string) bool { return !strings.HasSuffix(v, "EXAMPLE") }

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

var secretKinds = sync.OnceValue(SecretKinds)

// SecretKinds lists the kinds of secret detected, in detection order.
func SecretKinds() []string {
	out := []string{"password", "token", "key", "placeholder"}
	for _, d := range detectors {
		if d.class == ClassSecret && !slices.Contains(out, d.kind) {
			out = append(out, d.kind)
		}
	}
	return out
}

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
