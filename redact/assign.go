package redact

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Assignments: a value given to a name that says secret, in any of the
// shapes configuration and code write it. The name decides (its last
// word: PRIMARY_DB_PASSWORD is a password, password_min_length a length),
// the value's shape confirms (see values.go).

// nameStrength says how much a name says its value is a secret.
type nameStrength int

const (
	notSecret nameStrength = iota
	// weakName: key, auth, salt, signature…: only a random-looking value
	// is a secret.
	weakName
	// strongName: password, token, secret, api key…: any value that is
	// not a placeholder or a reference is.
	strongName
)

// strongHeads are last words of a name that say its value is a secret.
var strongHeads = map[string]bool{
	"password": true, "passwd": true, "pwd": true, "pass": true, "passphrase": true, "passcode": true, "pw": true,
	"secret": true, "token": true, "credential": true, "credentials": true, "apikey": true, "privatekey": true,
	"secretkey": true, "accesskey": true, "authtoken": true, "passwort": true, "kennwort": true, "contrasena": true,
}

// weakHeads are last words that say a value may be a secret.
var weakHeads = map[string]bool{
	"key": true, "auth": true, "salt": true, "signature": true, "sig": true, "hmac": true, "pepper": true, "nonce": true,
	"cookie": true, "session": true, "sid": true, "dsn": true, "seed": true, "mnemonic": true, "pin": true,
}

// strongBeforeKey are words that make "key" a secret's name: api key,
// secret key, signing key.
var strongBeforeKey = map[string]bool{
	"api": true, "access": true, "secret": true, "private": true, "signing": true, "encryption": true, "master": true,
	"license": true, "licence": true, "client": true, "app": true, "admin": true, "service": true, "account": true,
	"write": true, "deploy": true, "webhook": true, "shared": true, "hmac": true, "jwt": true, "session": true,
}

// aboutHeads are last words that make a name about a secret rather than
// the secret: password_min_length, secret_key_path, token_ttl,
// secret_name, password_hash.
var aboutHeads = map[string]bool{
	"length": true, "len": true, "min": true, "max": true, "count": true, "limit": true, "file": true, "path": true, "paths": true,
	"url": true, "uri": true, "name": true, "names": true, "type": true, "id": true, "ids": true, "ttl": true, "expiry": true, "expires": true,
	"expiration": true, "lifetime": true, "age": true, "size": true, "format": true, "version": true, "prefix": true, "suffix": true, "header": true,
	"env": true, "dir": true, "folder": true, "page": true, "hint": true, "policy": true, "rotation": true, "field": true, "fields": true,
	"kind": true, "mode": true, "algorithm": true, "alg": true, "endpoint": true, "ref": true, "reference": true, "manager": true,
	"provider": true, "enabled": true, "disabled": true, "required": true, "timeout": true, "usage": true, "label": true, "template": true,
	"hash": true, "hashes": true, "hasher": true, "hashers": true, "encoder": true, "fingerprint": true, "strength": true, "reset": true,
	"store": true, "storage": true, "source": true, "location": true, "secretref": true, "keyref": true, "arn": true, "scope": true,
	"scopes": true, "set": true, "count_": true, "regex": true, "pattern": true, "validator": true, "validation": true, "rules": true,
	"digest": true, "md5": true, "sha": true, "sha1": true, "sha256": true, "kid": true, "index": true, "column": true, "length_": true,
	"generator": true, "command": true, "cmd": true, "script": true, "helper": true, "backend": true, "secretname": true, "scanning": true,
	"protection": true, "prompt": true, "stdin": true, "authentication": true, "auth_": true, "retries": true, "attempts": true, "changed": true,
}

// aboutBefore are words that, right before the last, make it about a
// secret: next_token, page_token, max_tokens, public_key, primary_key.
var aboutBefore = map[string]bool{
	"next": true, "page": true, "continuation": true, "cursor": true, "sync": true, "max": true, "min": true, "total": true, "num": true,
	"count": true, "public": true, "pub": true, "primary": true, "foreign": true, "sort": true, "partition": true, "cache": true,
	"idempotency": true, "dedup": true, "routing": true, "shard": true, "lookup": true, "map": true, "hash": true, "sequence": true,
	"prompt": true, "completion": true, "input": true, "output": true, "reasoning": true, "cached": true, "ssh": true, "gpg": true,
	"csrf": true, "xsrf": true, "enable": true, "use": true, "show": true, "no": true, "existing": true,
}

// qualifiers are last words that say which of a secret a name holds,
// not what it is: DB_PASSWORD_PROD, secret_key_base, API_TOKEN_V2.
var qualifiers = map[string]bool{
	"prod": true, "production": true, "dev": true, "development": true, "staging": true, "stage": true, "test": true, "local": true,
	"live": true, "base": true, "value": true, "raw": true, "plain": true, "plaintext": true, "b64": true, "base64": true, "hex": true,
	"old": true, "new": true, "current": true, "primary": true, "secondary": true, "backup": true, "default": true,
}

// secretName says how much name says that its value is a secret.
func secretName(name string) nameStrength {
	parts := nameParts(name)
	for len(parts) > 1 && (qualifiers[parts[len(parts)-1]] || isVersion(parts[len(parts)-1])) {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 {
		return notSecret
	}
	head := parts[len(parts)-1]
	before := ""
	if len(parts) > 1 {
		before = parts[len(parts)-2]
	}
	if aboutHeads[head] || aboutBefore[before] && before != "" {
		return notSecret
	}
	switch {
	case strongHeads[head]:
		return strongName
	case head == "key" && strongBeforeKey[before]:
		return strongName
	case weakHeads[head]:
		return weakName
	}
	// Run together: PGPASSWORD, appsecret, authtoken, stripekey.
	for _, w := range []string{"password", "passwd", "passphrase", "secret", "token", "apikey", "secretkey", "accesskey", "privatekey"} {
		if strings.HasSuffix(head, w) && head != "tokens" {
			return strongName
		}
	}
	if strings.HasSuffix(head, "pwd") && len(head) > 3 && head != "cwd" && head != "oldpwd" {
		return strongName
	}
	return notSecret
}

// isVersion: 2, v2, 01.
func isVersion(w string) bool {
	return allDigits(strings.TrimPrefix(w, "v"))
}

// nameParts splits an identifier into lower-case words: at _ . - / :,
// spaces, and camelCase (clientSecret, APIKey).
func nameParts(name string) []string {
	var parts []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			parts = append(parts, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(strings.Trim(name, `"'[]`))
	for i, r := range rs {
		switch {
		case r == '_' || r == '-' || r == '.' || r == '/' || r == ':' || r == ' ':
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	// A Spanish ñ and accents fold: contraseña.
	for i, p := range parts {
		parts[i] = strings.NewReplacer("ñ", "n", "é", "e").Replace(p)
	}
	return parts
}

// acceptValue decides whether v, given to name (of strength s), is a
// secret. A password may be any word; a key or token is generated, so
// lower-case words ("proxy-handled", "phc_development_key") are a
// name or a sentinel rather than one.
func acceptValue(name string, s nameStrength, v string) bool {
	if s == notSecret || len([]rune(v)) < 4 || !notPlaceholder(v) || referenceValue(v) || documented(v) {
		return false
	}
	if s == strongName && generatedName(name) && identifierRE.MatchString(v) {
		return false
	}
	return s == strongName || highEntropy(v) || len(v) >= 24 && mixed(v) && entropy(v) >= 4
}

// generatedName reports whether name's last word is a key or token,
// values a machine generates, rather than a password or a secret, which
// a person may choose.
func generatedName(name string) bool {
	parts := nameParts(name)
	if len(parts) == 0 {
		return false
	}
	head := parts[len(parts)-1]
	return strings.HasSuffix(head, "key") || strings.HasSuffix(head, "token")
}

// codeExpression reports whether an unquoted value is an expression of
// code rather than a literal, which code would quote: after :=, or
// after a separator with space around it when more of the line follows
// ("apiKey = await getKey()", "token: isSet ? a : b"). A shell's
// NAME=value before a command, and a configuration line's value with a
// comment or another pair after it, are literals.
func codeExpression(text, sep string, s, e int) bool {
	if s > 0 && strings.IndexByte(`"'`+"`", text[s-1]) >= 0 {
		return false
	}
	switch t := strings.TrimSpace(sep); {
	case t == ":=":
		return true
	case t != "=" && t != ":" || !strings.ContainsAny(sep, " \t"):
		return false
	}
	rest := text[e:]
	if strings.HasPrefix(rest, ";") {
		// A statement's end: code.
		return true
	}
	if i := strings.IndexAny(rest, "\n\r"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.Index(rest, `\n`); i >= 0 {
		rest = rest[:i]
	}
	rest = strings.TrimLeft(rest, " \t")
	return rest != "" && strings.IndexByte(`,;&#})]"'\`, rest[0]) < 0 && !strings.HasPrefix(rest, "//")
}

var (
	// assignRE finds a name given a value: NAME=, NAME:, "NAME":,
	// NAME =>, NAME :=, NAME：, NAME 是 (the value is read by readValue).
	assignRE = regexp.MustCompile(`(?:^|[^A-Za-z0-9_$%{.\-])(["']?)([A-Za-z_][A-Za-z0-9_.\-]*)(["']?)(\s*(?:=>|:=|=|:|：)\s*|\s+(?:是|为)\s*|(?:是|为))`)
	// elementRE: <password>…</password>.
	elementRE = regexp.MustCompile(`<([A-Za-z_][A-Za-z0-9_.\-:]*)>([^<>\n]{1,256})</([A-Za-z_][A-Za-z0-9_.\-:]*)>`)
	// attrPairRE: key="SmtpPassword" value="…", name="x.password" value="…".
	attrPairRE = regexp.MustCompile(`\b(?:key|name)\s*=\s*"([^"]{1,128})"\s+value\s*=\s*"([^"]*)"`)
	// defineRE: define('DB_PASSWORD', '…') in PHP, and calls that set a
	// name: setenv("X", "…"), os.Setenv("X", "…"), putenv.
	defineRE = regexp.MustCompile(`\b(?:define|setenv|Setenv|putenv|set_secret|setSecret)\s*\(\s*['"]([A-Za-z_][A-Za-z0-9_.\-]*)['"]\s*,\s*`)
	// indexRE: os.environ["X"] = …, ENV['X'] = …, config["x"] = ….
	indexRE = regexp.MustCompile(`\[\s*['"]([A-Za-z_][A-Za-z0-9_.\-]*)['"]\s*\]\s*(?:=|:=)\s*`)
	// sqlPasswordRE: IDENTIFIED BY '…', WITH PASSWORD '…'.
	sqlPasswordRE = regexp.MustCompile(`(?i)\b(?:IDENTIFIED\s+(?:WITH\s+\w+\s+)?BY|(?:WITH\s+)?(?:ENCRYPTED\s+|UNENCRYPTED\s+)?PASSWORD)\s+'([^'\n]{1,256})'`)
)

// nameHints are held by every name secretName takes for a secret's, in
// lower case (TestNameHints).
var nameHints = []string{"pass", "pw", "secret", "token", "credential", "key", "kennwort", "contrase", "auth", "salt", "sig",
	"hmac", "pepper", "nonce", "cookie", "session", "sid", "dsn", "seed", "mnemonic", "pin"}

// findAssignments finds the values of names that say secret (lower is
// text in lower case).
func findAssignments(text, lower string, add func(kind string, s, e int)) {
	if !slices.ContainsFunc(nameHints, func(h string) bool { return strings.Contains(lower, h) }) && !strings.Contains(lower, "identified") {
		return
	}
	findIn(assignRE, text, lower, nameHints, 64, func(m []int) {
		name := text[m[4]:m[5]]
		st := secretName(name)
		if st == notSecret {
			return
		}
		s, e, ok := readValue(text, m[9])
		if !ok || !acceptValue(name, st, text[s:e]) || proseColon(text, m[0], m[8], m[9], s, e) {
			return
		}
		if codeExpression(text, text[m[8]:m[9]], s, e) {
			return
		}
		add(kindFor(name), s, e)
	})
	for _, m := range elementRE.FindAllStringSubmatchIndex(text, -1) {
		if text[m[2]:m[3]] != text[m[6]:m[7]] {
			continue
		}
		if v := text[m[4]:m[5]]; acceptValue(text[m[2]:m[3]], secretName(text[m[2]:m[3]]), strings.TrimSpace(v)) {
			add("password", m[4], m[5])
		}
	}
	for _, m := range attrPairRE.FindAllStringSubmatchIndex(text, -1) {
		if acceptValue(text[m[2]:m[3]], secretName(text[m[2]:m[3]]), text[m[4]:m[5]]) {
			add("password", m[4], m[5])
		}
	}
	for _, re := range []*regexp.Regexp{defineRE, indexRE} {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			st := secretName(text[m[2]:m[3]])
			if s, e, ok := readValue(text, m[1]); ok && acceptValue(text[m[2]:m[3]], st, text[s:e]) {
				add(kindFor(text[m[2]:m[3]]), s, e)
			}
		}
	}
	for _, m := range sqlPasswordRE.FindAllStringSubmatchIndex(text, -1) {
		if v := text[m[2]:m[3]]; notPlaceholder(v) && len(v) >= 4 {
			add("password", m[2], m[3])
		}
	}
}

// kindFor is the placeholder kind of a secret given to name.
func kindFor(name string) string {
	parts := nameParts(name)
	if slices.ContainsFunc(parts, func(p string) bool { return strings.Contains(p, "token") }) {
		return "token"
	}
	if slices.ContainsFunc(parts, func(p string) bool { return p == "key" || strings.HasSuffix(p, "key") || p == "secret" }) {
		return "key"
	}
	return "password"
}

// proseColon reports whether "password: value" (the name at at, the
// separator from sepStart to sepEnd, the value from s to e) is a
// sentence rather than configuration: words before the name on its line,
// a colon and a space, and a value in words that is no credential
// ("which password: the old one"). A sentence that states a password
// is read by the prose rule, which asks as much of the value.
func proseColon(text string, at, sepStart, sepEnd, s, e int) bool {
	if strings.TrimSpace(text[sepStart:sepEnd]) != ":" || sepEnd == sepStart+1 || s > sepEnd || credentialLike(text[s:e]) {
		return false
	}
	start := strings.LastIndexByte(text[:at], '\n') + 1
	return len(strings.Fields(text[start:at])) >= 2
}

// readValue reads the value that starts at i (after spaces): the inside
// of quotes, or a run up to white space, a quote, a separator of pairs
// (; & |, and a comma before a space or another pair), or an escape
// sequence (\n, \" in JSON text), without the sentence's closing
// punctuation or an unbalanced closing bracket.
func readValue(text string, i int) (start, end int, ok bool) {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	if i >= len(text) {
		return 0, 0, false
	}
	// Quoted: "…", '…', `…`, “…”, \"…\" (inside a JSON string).
	for _, q := range [][2]string{{`\"`, `\"`}, {`"`, `"`}, {`'`, `'`}, {"`", "`"}, {"“", "”"}, {"‘", "’"}} {
		if strings.HasPrefix(text[i:], q[0]) {
			s := i + len(q[0])
			line := text[s:]
			if nl := strings.IndexByte(line, '\n'); nl >= 0 {
				line = line[:nl]
			}
			if e := strings.Index(line, q[1]); e > 0 && e <= 512 {
				// \" ends a JSON-escaped value, not an inner ".
				if q[0] == `"` && line[e-1] == '\\' {
					break
				}
				return s, s + e, true
			}
			if q[0] == `\"` {
				i = s
			}
			break
		}
	}
	s := i
	e := i
	for e < len(text) {
		c := text[e]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\'' || c == '`' || c == ';' || c == '&' || c == '|' {
			break
		}
		if c == '\\' && e+1 < len(text) && strings.IndexByte(`"'nrt\`, text[e+1]) >= 0 {
			break
		}
		if c == ',' && (e+1 >= len(text) || text[e+1] == ' ' || pairAhead(text[e+1:])) {
			break
		}
		if strings.HasPrefix(text[e:], "，") || strings.HasPrefix(text[e:], "。") || strings.HasPrefix(text[e:], "；") || strings.HasPrefix(text[e:], "”") {
			break
		}
		e++
	}
	// Trim what closes the sentence or the call around the value, but
	// an ellipsis, which says the value is left out.
	if strings.HasSuffix(text[s:e], "..") {
		return s, e, true
	}
	for e > s {
		c := text[e-1]
		switch {
		case strings.IndexByte(".,:;", c) >= 0 && e-1 > s:
			e--
			continue
		case strings.IndexByte(")]}>", c) >= 0 && unbalanced(text[s:e], c):
			e--
			continue
		}
		break
	}
	if e <= s {
		return 0, 0, false
	}
	return s, e, true
}

// pairAhead reports whether s starts with another name=value pair.
func pairAhead(s string) bool { return pairAheadRE.MatchString(s) }

var pairAheadRE = regexp.MustCompile(`^\s*[A-Za-z_][A-Za-z0-9_.\-]*\s*[=:]`)

// unbalanced reports whether v holds more closing c than openings.
func unbalanced(v string, c byte) bool {
	open := map[byte]byte{')': '(', ']': '[', '}': '{', '>': '<'}[c]
	return strings.Count(v, string(c)) > strings.Count(v, string(open))
}
