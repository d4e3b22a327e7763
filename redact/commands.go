package redact

import (
	"regexp"
	"strings"
)

// Commands: passwords given to a program on its command line, as a flag
// whose name says so (--password X, --api-key=X), as the flags and
// positions the common tools take them in (mysql -pX, curl -u user:X,
// htpasswd -b file user X, docker login -p X, openssl -passout pass:X),
// or on standard input (echo X | docker login --password-stdin).

// flagRE finds a flag with a name and its value: --name X, --name=X,
// -name X.
var flagRE = regexp.MustCompile(`(?:^|[\s"'(\[])(--?)([A-Za-z][A-Za-z0-9_-]*)(=|[ \t]+)`)

// arg is one word of a command line, with where its value is in the
// text (inside its quotes).
type arg struct {
	s, e int
	v    string
}

// splitArgs splits a command line (text[s:e]) into words, honouring
// quotes, and stopping at what ends a command (; && || | and a line
// break, or the closing quote of the JSON string that holds it).
func splitArgs(text string, s, e int) []arg {
	var out []arg
	i := s
	for i < e {
		for i < e && (text[i] == ' ' || text[i] == '\t') {
			i++
		}
		if i >= e {
			break
		}
		c := text[i]
		if c == ';' || c == '|' || c == '&' || c == '\n' || c == '\r' || c == ')' {
			break
		}
		if c == '\\' && i+1 < e && (text[i+1] == 'n' || text[i+1] == '"') {
			break
		}
		if c == '"' || c == '\'' || c == '`' {
			j := strings.IndexByte(text[i+1:e], c)
			if j < 0 {
				break
			}
			out = append(out, arg{i + 1, i + 1 + j, text[i+1 : i+1+j]})
			i += j + 2
			continue
		}
		j := i
		for j < e && !strings.ContainsRune(" \t\n\r;|&\"'`", rune(text[j])) && !(text[j] == '\\' && j+1 < e && (text[j+1] == 'n' || text[j+1] == '"')) {
			j++
		}
		out = append(out, arg{i, j, text[i:j]})
		i = j
	}
	return out
}

// commandRE finds the programs whose password arguments are read below.
var commandRE = regexp.MustCompile(`(?:^|[\s"'(;|&/])(curl|wget|https?|xh|htpasswd|net\s+use|poetry\s+config|sshpass|mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|mongo|mongosh|mongodump|mongorestore|redis-cli|valkey-cli|docker|podman|nerdctl|buildah|skopeo|helm|oras|crane|zip|unzip|7z|7za|7zz|unrar|rar|smbclient|openssl|keytool|sqlcmd|bcp|ldapsearch|ldapadd|ldapmodify|ldapdelete|ldapwhoami|ldappasswd|influx|rabbitmqctl|pg_dump|vault|psexec)\b`)

// findCommands finds the passwords of command lines in text.
func findCommands(text, lower string, add func(kind string, s, e int)) {
	// Flags whose name says secret, on any command.
	findIn(flagRE, text, lower, nameHints, 64, func(m []int) {
		name := text[m[4]:m[5]]
		st := secretName(name)
		if st == notSecret || strings.HasSuffix(name, "-stdin") || strings.HasSuffix(name, "-file") {
			return
		}
		if s, e, ok := readValue(text, m[7]); ok && !strings.HasPrefix(text[s:e], "-") && acceptValue(name, st, text[s:e]) {
			add(kindFor(name), s, e)
		}
	})
	for _, m := range commandRE.FindAllStringSubmatchIndex(text, -1) {
		prog := strings.Join(strings.Fields(text[m[2]:m[3]]), " ")
		args := splitArgs(text, m[3], len(text))
		for _, a := range commandPasswords(prog, args) {
			if v := strings.Trim(a.v, `"'`); notPlaceholder(v) && !referenceValue(v) && len(v) >= 3 {
				add("password", a.s, a.e)
			}
		}
	}
	// A password written to a program that reads it on standard input.
	for _, m := range stdinRE.FindAllStringSubmatchIndex(text, -1) {
		s, e := m[2], m[3]
		v := text[s:e]
		if i := strings.IndexByte(v, ':'); i > 0 && strings.Contains(text[m[0]:m[1]], "chpasswd") {
			s += i + 1
			v = v[i+1:]
		}
		if notPlaceholder(v) && !referenceValue(v) && len(v) >= 4 {
			add("password", s, e)
		}
	}
}

// stdinRE: echo X | … --password-stdin (or passwd --stdin, chpasswd,
// sudo -S).
var stdinRE = regexp.MustCompile(`\b(?:echo|printf)\s+(?:-[neE]+\s+)?['"]?([^\s|'"]+)['"]?\s*\|\s*[^|\n]*?(?:--password-stdin|--stdin\b|\bchpasswd\b|\bsudo\s+-S\b|\bpasswd\b)`)

// commandPasswords returns the arguments of prog that are passwords.
func commandPasswords(prog string, args []arg) []arg {
	var out []arg
	// after returns the value of flag i: attached (-pX, -p=X) or the
	// next word.
	next := func(i int) (arg, bool) {
		if i+1 < len(args) {
			return args[i+1], true
		}
		return arg{}, false
	}
	attached := func(a arg, flag string) (arg, bool) {
		if strings.HasPrefix(a.v, flag) && len(a.v) > len(flag) {
			v := strings.TrimPrefix(a.v[len(flag):], "=")
			return arg{a.e - len(v), a.e, v}, v != ""
		}
		return arg{}, false
	}
	// userPass returns the password of a user:password argument.
	userPass := func(a arg, sep byte) (arg, bool) {
		i := strings.IndexByte(a.v, sep)
		if i <= 0 || i == len(a.v)-1 {
			return arg{}, false
		}
		user, pass := a.v[:i], a.v[i+1:]
		if allDigits(user) && allDigits(pass) {
			return arg{}, false // uid:gid
		}
		return arg{a.s + i + 1, a.e, pass}, true
	}
	positional := func() []arg {
		var p []arg
		for _, a := range args {
			if !strings.HasPrefix(a.v, "-") {
				p = append(p, a)
			}
		}
		return p
	}
	hasFlag := func(letter string) bool {
		for _, a := range args {
			if strings.HasPrefix(a.v, "-") && !strings.HasPrefix(a.v, "--") && strings.Contains(a.v[1:], letter) {
				return true
			}
		}
		return false
	}
	for i, a := range args {
		switch prog {
		case "curl", "wget", "http", "https", "xh", "influx":
			if a.v == "-u" || a.v == "--user" || a.v == "-a" || a.v == "--auth" || a.v == "-U" || a.v == "--proxy-user" || prog == "influx" && a.v == "-p" {
				if n, ok := next(i); ok {
					if p, ok := userPass(n, ':'); ok {
						out = append(out, p)
					}
				}
			}
			for _, f := range []string{"--user=", "--auth=", "--proxy-user=", "-u"} {
				if f == "-u" && strings.HasPrefix(a.v, "--") {
					continue
				}
				if v, ok := attached(a, f); ok {
					if p, ok := userPass(v, ':'); ok {
						out = append(out, p)
					}
					break
				}
			}
		case "sshpass":
			if a.v == "-p" {
				if n, ok := next(i); ok {
					out = append(out, n)
				}
			} else if v, ok := attached(a, "-p"); ok {
				out = append(out, v)
			}
		case "mysql", "mysqldump", "mysqladmin", "mariadb", "mariadb-dump":
			// -pSECRET, attached; a bare -p asks for it.
			if v, ok := attached(a, "-p"); ok && !strings.HasPrefix(a.v, "--") {
				out = append(out, v)
			}
		case "mongo", "mongosh", "mongodump", "mongorestore", "sqlcmd", "bcp":
			if a.v == "-p" || a.v == "-P" {
				if n, ok := next(i); ok && !strings.HasPrefix(n.v, "-") {
					out = append(out, n)
				}
			}
		case "redis-cli", "valkey-cli":
			if a.v == "-a" {
				if n, ok := next(i); ok {
					out = append(out, n)
				}
			}
		case "docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras", "crane":
			if a.v == "-p" && loginIn(args) {
				if n, ok := next(i); ok {
					out = append(out, n)
				}
			}
		case "zip", "unzip":
			if a.v == "-P" {
				if n, ok := next(i); ok {
					out = append(out, n)
				}
			}
		case "7z", "7za", "7zz", "unrar", "rar":
			if v, ok := attached(a, "-p"); ok {
				out = append(out, v)
			}
		case "smbclient":
			if a.v == "-U" || a.v == "--user" {
				if n, ok := next(i); ok {
					if p, ok := userPass(n, '%'); ok {
						out = append(out, p)
					}
				}
			} else if v, ok := attached(a, "--user="); ok {
				if p, ok := userPass(v, '%'); ok {
					out = append(out, p)
				}
			}
		case "openssl":
			if a.v == "-passin" || a.v == "-passout" || a.v == "-pass" || a.v == "-password" || a.v == "-k" {
				if n, ok := next(i); ok {
					if v, ok := attached(n, "pass:"); ok {
						out = append(out, v)
					} else if a.v == "-k" {
						out = append(out, n)
					}
				}
			}
		case "keytool":
			switch a.v {
			case "-storepass", "-keypass", "-srcstorepass", "-deststorepass", "-srckeypass", "-destkeypass", "-new":
				if n, ok := next(i); ok {
					out = append(out, n)
				}
			}
		case "ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami", "ldappasswd":
			if a.v == "-w" || a.v == "-s" && prog == "ldappasswd" {
				if n, ok := next(i); ok {
					out = append(out, n)
				}
			}
		case "rabbitmqctl":
			if (a.v == "add_user" || a.v == "change_password") && i+2 < len(args) {
				out = append(out, args[i+2])
			}
		case "psexec":
			if a.v == "-p" {
				if n, ok := next(i); ok {
					out = append(out, n)
				}
			}
		}
	}
	switch prog {
	case "htpasswd":
		// htpasswd -b FILE USER PASSWORD; -n prints instead of a file.
		if hasFlag("b") {
			p := positional()
			at := 2
			if hasFlag("n") {
				at = 1
			}
			if len(p) > at {
				out = append(out, p[at])
			}
		}
	case "net use":
		// net use [DRIVE] \\server\share [PASSWORD | *] [/user:NAME]
		p := positional()
		for j, a := range p {
			if strings.HasPrefix(a.v, `\\`) || strings.HasPrefix(a.v, `//`) {
				if j+1 < len(p) && !strings.HasPrefix(p[j+1].v, "/") && p[j+1].v != "*" {
					out = append(out, p[j+1])
				}
				break
			}
		}
	case "poetry config":
		// poetry config http-basic.NAME USER PASSWORD
		p := positional()
		if len(p) >= 3 && strings.HasPrefix(p[0].v, "http-basic.") {
			out = append(out, p[2])
		}
	}
	return out
}

// loginIn reports whether a container tool's arguments log in.
func loginIn(args []arg) bool {
	for _, a := range args {
		if a.v == "login" {
			return true
		}
	}
	return false
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
