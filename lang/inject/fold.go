package inject

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/runes"
)

// payloadRE is a run of characters that may be an encoded payload: base64
// (standard or URL alphabet), base32 or hex, long enough to hold words.
var payloadRE = regexp.MustCompile(`[A-Za-z0-9+/_-]{16,}={0,6}`)

// decodePayloads writes each base64, base32 or hex payload of t that
// decodes to text ("aWdub3JlIHlvdXIgcnVsZXM=" → "ignore your rules") as
// that text. Words, hashes and keys stay: they decode to bytes that are
// not text.
func decodePayloads(t string) string {
	return payloadRE.ReplaceAllStringFunc(t, func(p string) string {
		for _, dec := range []func(string) ([]byte, error){
			base64.StdEncoding.DecodeString,
			base64.RawStdEncoding.DecodeString,
			base64.URLEncoding.DecodeString,
			base64.RawURLEncoding.DecodeString,
			base32.StdEncoding.DecodeString,
			base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString,
			hex.DecodeString,
		} {
			if b, err := dec(p); err == nil && readable(b) {
				return " " + string(b) + " "
			}
		}
		return p
	})
}

// readable reports whether b is text in words: valid UTF-8, printable,
// mostly letters, with a space or Chinese in it.
func readable(b []byte) bool {
	if len(b) < 6 || !utf8.Valid(b) {
		return false
	}
	letters, n, gaps := 0, 0, false
	for _, r := range string(b) {
		n++
		switch {
		case r == ' ' || runes.IsCJK(r):
			gaps = true
		case !unicode.IsPrint(r):
			return false
		}
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return gaps && 2*letters >= n
}

// unscramble rewrites runs of words written backwards ("snoitcurtsni
// ruoy erongi") or with their letters shifted, as ROT13 and other Caesar
// ciphers do ("vtaber nyy ehyrf", "ljqruh doo uxohv"), as they read: a run of
// three or more Latin words none of which is a stop word, of which at
// least two distinct ones, and a third, become stop words (of three letters or more) or words of orders to an
// agent once decoded.
func unscramble(fields []string) []string {
	scrambled := func(w string) bool {
		for _, r := range w {
			// A colon ends a run: what comes before it introduces the
			// payload ("obey: snoitcurtsni ruoy erongi").
			if r > unicode.MaxASCII || !unicode.IsLetter(r) && !strings.ContainsRune(`'",.;!?`, r) {
				return false
			}
		}
		return strings.IndexFunc(w, unicode.IsLetter) >= 0 && !lang.IsStopWord(bare(w))
	}
	out := make([]string, 0, len(fields))
	for i := 0; i < len(fields); {
		j := i
		for j < len(fields) && scrambled(fields[j]) {
			j++
		}
		if j == i {
			out = append(out, fields[i])
			i++
			continue
		}
		run := fields[i:j]
		if j-i >= 3 {
			if stops(run, reverse) >= max(2, (j-i)/3) {
				rs := make([]string, len(run))
				for k, w := range run {
					rs[len(run)-1-k] = reverse(w)
				}
				run = rs
			} else {
				for shift := 1; shift < 26; shift++ {
					dec := func(w string) string { return caesar(w, shift) }
					if stops(run, dec) >= max(2, (j-i)/3) {
						rs := make([]string, len(run))
						for k, w := range run {
							rs[k] = dec(w)
						}
						run = rs
						break
					}
				}
			}
		}
		out = append(out, run...)
		i = j
	}
	return out
}

// stops counts the distinct words of run that are stop words or order
// words once decoded: "dan dan" shifted is "her her", once.
func stops(run []string, decode func(string) string) int {
	seen := map[string]bool{}
	for _, w := range run {
		// "on" and "no" read as each other backwards.
		d := bare(decode(w))
		if len(d) >= 3 && (lang.IsStopWord(d) || orderWords[d]) {
			seen[d] = true
		}
	}
	return len(seen)
}

// orderWords are words of the orders an encoded text hides, which the
// stop words do not count.
var orderWords = map[string]bool{
	"ignore": true, "disregard": true, "forget": true, "override": true, "instructions": true, "rules": true,
	"previous": true, "prompt": true, "system": true, "reveal": true, "print": true, "send": true,
	"delete": true, "password": true, "passwords": true, "secret": true, "secrets": true, "key": true, "keys": true,
}

// bare is w without the punctuation around it.
func bare(w string) string {
	return strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func reverse(w string) string {
	rs := []rune(w)
	for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
		rs[i], rs[j] = rs[j], rs[i]
	}
	return string(rs)
}

// caesar shifts each letter of w shift places on (ROT13 is 13).
func caesar(w string, shift int) string {
	k := rune(shift)
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return 'a' + (r-'a'+k)%26
		case r >= 'A' && r <= 'Z':
			return 'A' + (r-'A'+k)%26
		}
		return r
	}, w)
}

// secretRE is a name of a secret once the text is lower case: a password,
// token, key or credential by name ("password", "stripe_secret_key",
// "openai_api_key"), a file or folder of keys (~/.ssh, id_rsa, .pem,
// .env), the environment variables that hold them (os.environ, printenv),
// or one in Chinese (密码, 私钥, 令牌, 环境变量).
var secretRE = regexp.MustCompile(`passw(?:or)?ds?|passphrase|credential|secret|api_?key|apikey|access_?key|private_?key|privkey|_token|token_|^tokens?\b|bearer|\bid_(?:rsa|ed25519|ecdsa|dsa)|\.pem\b|\.p12\b|\.pfx\b|\.kdbx\b|keystore|keychain|environ\b|process\.env|printenv|env vars|environment variables|\.ssh\b|\.gnupg\b|\.aws\b|\.netrc\b|\.npmrc\b|\.pgpass\b|\.env\b|密码|口令|密钥|秘钥|私钥|令牌|凭证|凭据|助记词|环境变量`)

// markSecrets follows each word that names a secret by xsecret.
func markSecrets(fields []string) []string {
	var out []string
	for _, f := range fields {
		out = append(out, f)
		if secretRE.MatchString(f) {
			out = append(out, "xsecret")
		}
	}
	return out
}
