package redact

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Prose: a password, key or token stated in words. "The wifi password for
// the guest network is …", "new password: …", "the secret is …",
// "数据库的密码已经改成 … 了", "Passwort für den Testnutzer ist …". A noun
// that names a secret, a few words at most, a word that states its value
// (is, was, :, →, 是, 改成, ist, es…), then the value, which must look
// like a credential rather than a word ("the password is in the
// envelope", "the secret is patience"). A value right after the noun
// counts in quotes or backticks, or when it is plainly random ("recaptcha
// secret 6Lc…").

// secretNouns name a secret in prose, in the languages agents' users
// write.
const secretNouns = `passwords?|passwd|pw|pwd|passcode|passphrase|pin\s+code|secret(?:\s+key)?|(?:api|access|secret|private|signing|auth|bearer|admin|root|master)[\s_-]+(?:key|token)|token|credentials?|` +
	`passwort|kennwort|contraseña|clave|mot\s+de\s+passe|senha|parola\s+d'ordine|wachtwoord|hasło|пароль|パスワード|비밀번호|` +
	`密码|口令|密钥|秘钥|令牌|暗号`

// statements say what a secret's value is.
const statements = `is|was|will\s+be|becomes|=|:|：|->|→|=>|now|to|ist|lautet|war|es|est|é|è|是|为|為|改成了|改成|改为|换成了|换成|设为|设置为|设成|は|는|은`

var (
	// proseRE: NOUN [up to five words] STATEMENT VALUE, on one line:
	// the words between are words (no code, no escape sequence), and the
	// statement word stands apart.
	proseRE = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}_])(` + secretNouns + `)((?:[ \t,]+[\p{L}\p{N}'’*-]+){0,5}?)[ \t]*(` + statements + `)[ \t"'“‘` + "`*" + `]*([^\s"'”’` + "`" + `，。；、）)]+)`)
	// directRE: NOUN VALUE, the value quoted or random-looking.
	directRE = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}_])(` + secretNouns + `)(?:[ \t]*["'“‘` + "`" + `]([^"'”’` + "`" + `\n]{4,128})["'”’` + "`" + `]|[ \t]+([^\s"'“‘` + "`" + `，。；、=:<>@/\\][^\s"'“‘` + "`" + `，。；、]{5,127}))`)
	// cjkNounRE: 密码… without a space before the value.
	cjkNounRE = regexp.MustCompile(`(?:密码|口令|密钥|秘钥|令牌)[^\s，。；:：]{0,6}?(?:是|为|為|改成了|改成|改为|换成了|换成|设为|设置为|设成|[:：=])\s*["'“]?([^\s"'”，。；,;、了]{4,})`)
)

// aboutWords after a secret's noun say the sentence is about the secret,
// not its value: "password manager", "password policy", "token expired".
var aboutWords = map[string]bool{
	"manager": true, "managers": true, "policy": true, "policies": true, "reset": true, "resets": true, "field": true, "fields": true, "hash": true, "hashes": true,
	"length": true, "requirements": true, "requirement": true, "rules": true, "rotation": true, "expired": true, "expires": true, "expiry": true,
	"prompt": true, "change": true, "changes": true, "changed": true, "strength": true, "file": true, "files": true, "store": true, "vault": true,
	"authentication": true, "auth": true, "login": true, "form": true, "box": true, "input": true, "protected": true, "less": true, "based": true,
	"recovery": true, "hint": true, "type": true, "name": true, "sharing": true, "scanning": true, "scanner": true, "leak": true, "leaked": true,
	"refresh": true, "refreshed": true, "ttl": true, "lifetime": true, "limit": true, "count": true, "counts": true, "usage": true, "budget": true,
	"must": true, "should": true, "needs": true, "need": true, "has": true, "have": true, "had": true,
	"fails": true, "failed": true, "failure": true, "error": true, "errors": true, "wrong": true, "incorrect": true, "invalid": true,
}

// nounHints are held by every noun of secretNouns, in lower case
// (TestNounHints).
var nounHints = []string{"pass", "pw", "pin", "secret", "key", "token", "credential", "kennwort", "contrase", "clave", "senha", "parola",
	"wachtwoord", "hasło", "пароль", "パスワード", "비밀번호", "密码", "口令", "密钥", "秘钥", "令牌", "暗号"}

// findProse finds secrets stated in prose (lower is text in lower case).
func findProse(text, lower string, add func(kind string, s, e int)) {
	findIn(proseRE, text, lower, nounHints, 400, func(m []int) {
		between := strings.Fields(strings.ToLower(strings.ReplaceAll(text[m[4]:m[5]], "*", "")))
		if len(between) > 0 && aboutWords[strings.Trim(between[0], ",")] {
			return
		}
		// A word statement stands apart from the words around it ("is",
		// not "this"), and "to" states a value only after a word that
		// sets one ("changed the password to …").
		st := strings.ToLower(text[m[6]:m[7]])
		if isWordStatement(st) && (m[6] > 0 && isLetterBefore(text, m[6]) || m[7] < len(text) && isLetterAt(text, m[7])) {
			return
		}
		if st == "to" && !slices.ContainsFunc(between, func(w string) bool { return settingVerbs[w] }) && !settingVerbBefore(text, m[2]) {
			return
		}
		s, e := trimProseValue(text, m[8], m[9])
		if e > s && credentialLike(text[s:e]) {
			add(proseKind(text[m[2]:m[3]]), s, e)
		}
	})
	findIn(directRE, text, lower, nounHints, 200, func(m []int) {
		if m[4] >= 0 {
			// Quoted: anything that is not a word of the sentence. A
			// noun in quotes of its own is a string of code ('token'),
			// the next quote not its value's.
			if m[2] > 0 && strings.IndexByte(`"'`+"`", text[m[2]-1]) >= 0 || strings.Contains(text[m[4]:m[5]], `\`) {
				return
			}
			if v := text[m[4]:m[5]]; notPlaceholder(v) && !referenceValue(v) && (credentialLike(v) || !strings.Contains(v, " ") && len(v) >= 8) {
				add(proseKind(text[m[2]:m[3]]), m[4], m[5])
			}
			return
		}
		s, e := trimProseValue(text, m[6], m[7])
		if v := text[s:e]; e > s && !aboutWords[strings.ToLower(v)] && !isHex(v) && (highEntropy(v) || len(v) >= 12 && credentialLike(v) && entropy(v) >= 3.3) {
			add(proseKind(text[m[2]:m[3]]), s, e)
		}
	})
	if !strings.ContainsAny(text, "密口令秘") {
		return
	}
	for _, m := range cjkNounRE.FindAllStringSubmatchIndex(text, -1) {
		s, e := trimProseValue(text, m[2], m[3])
		if v := text[s:e]; e > s && notPlaceholder(v) && !referenceValue(v) && (mixed(v) || credentialLike(v) || len(v) >= 6 && !containsCJK(v)) {
			add("password", s, e)
		}
	}
}

// trimProseValue cuts a value at an escape sequence (\n, \" in JSON
// text), and drops the sentence's punctuation and markdown's emphasis
// around it. A value that opens with markup or a bracket is none.
func trimProseValue(text string, s, e int) (int, int) {
	if i := strings.IndexByte(text[s:e], '\\'); i >= 0 && s+i+1 < len(text) && strings.IndexByte(`nrt"\\u`, text[s+i+1]) >= 0 {
		e = s + i
	}
	for s < e && (text[s] == '*' || text[s] == '_') {
		s++
	}
	for e > s && strings.IndexByte(".,;:!?)]*_", text[e-1]) >= 0 {
		e--
	}
	if e > s && strings.IndexByte("([{|#-\\<", text[s]) >= 0 {
		return s, s
	}
	return s, e
}

func isLetterAt(text string, i int) bool {
	r, _ := utf8.DecodeRuneInString(text[i:])
	return unicode.IsLetter(r) && r < 0x2E80
}

func isLetterBefore(text string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(text[:i])
	return unicode.IsLetter(r) && r < 0x2E80
}

// isWordStatement: a statement spelt in Latin letters.
func isWordStatement(st string) bool { return st != "" && st[0] >= 'a' && st[0] <= 'z' }

// settingVerbs set a secret to a value: "changed the password to …".
var settingVerbs = map[string]bool{"changed": true, "change": true, "set": true, "reset": true, "updated": true, "update": true, "rotated": true, "rotate": true, "switched": true}

// settingVerbBefore reports whether a setting verb comes in the few
// words before the noun at at ("set the root password to …").
func settingVerbBefore(text string, at int) bool {
	start := strings.LastIndexAny(text[:at], "\n.!?") + 1
	words := strings.Fields(strings.ToLower(text[start:at]))
	return slices.ContainsFunc(words[max(0, len(words)-4):], func(w string) bool { return settingVerbs[w] })
}

func containsCJK(s string) bool {
	for _, r := range s {
		if r >= 0x2E80 {
			return true
		}
	}
	return false
}

// proseKind is the placeholder kind of a secret a noun names.
func proseKind(noun string) string {
	n := strings.ToLower(noun)
	switch {
	case strings.Contains(n, "token") || strings.Contains(n, "令牌"):
		return "token"
	case strings.Contains(n, "key") || strings.Contains(n, "secret") || strings.Contains(n, "密钥") || strings.Contains(n, "秘钥"):
		return "key"
	}
	return "password"
}
