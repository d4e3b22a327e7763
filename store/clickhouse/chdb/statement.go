package chdb

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ReadOnly reports whether stmt is one statement that only reads (SELECT,
// WITH, SHOW, DESCRIBE, EXPLAIN, EXISTS), read as ClickHouse reads it:
// comments nest, strings and quoted names hide what they hold. It decides
// what leaves the cache of table descriptions as it is; what the SQL
// endpoint of `hindsight dev` runs is decided by Confined and the engine's
// readonly setting.
func ReadOnly(stmt string) bool {
	toks, err := lex(stmt)
	return err == nil && readOnlyStatement(toks) == nil
}

// Confined says why stmt may not run on an endpoint that only reads the
// database, or nil when it may: it must be one statement that only reads,
// and name no table function or function that reaches outside the
// database (files, URLs, object stores, other servers, programs) nor a
// clause that writes or reads a file (INTO OUTFILE, FROM INFILE). The
// engine runs what passes with readonly=1, which refuses every write and
// every table function besides; this refuses what readonly lets through
// (file() the function, INTO OUTFILE), and says so in words.
func Confined(stmt string) error {
	toks, err := lex(stmt)
	if err != nil {
		return err
	}
	if err := readOnlyStatement(toks); err != nil {
		return err
	}
	for i, t := range toks {
		if t.kind != word && t.kind != quoted {
			continue
		}
		name := strings.ToLower(t.text)
		if t.kind == word && (name == "outfile" || name == "infile") {
			return fmt.Errorf("INTO OUTFILE and FROM INFILE reach files outside the database; this endpoint only reads the database")
		}
		if i+1 < len(toks) && toks[i+1].kind == punct && toks[i+1].text == "(" && outside(name) {
			return fmt.Errorf("%s(…) reaches outside the database (files, URLs, object stores, other servers or programs); this endpoint only reads the database", t.text)
		}
	}
	return nil
}

// outsideFunctions are the table functions and functions that read or
// write outside the database, by lower-cased name; outsidePrefixes cover
// their families (s3Cluster, icebergS3, azureBlobStorageCluster, …).
var (
	outsideFunctions = map[string]bool{
		"file": true, "filecluster": true, "url": true, "urlcluster": true, "remote": true, "remotesecure": true,
		"cluster": true, "clusterallreplicas": true, "mysql": true, "postgresql": true, "mongodb": true, "redis": true,
		"sqlite": true, "jdbc": true, "odbc": true, "executable": true, "input": true, "dictionary": true, "gcs": true,
		"oss": true, "cosn": true, "hudi": true, "ytsaurus": true, "arrowflight": true, "prometheusquery": true,
		"timeseriesdata": true, "timeseriesmetrics": true, "timeseriestags": true,
	}
	outsidePrefixes = []string{"s3", "hdfs", "azure", "iceberg", "deltalake", "paimon", "hive", "kafka", "nats", "rabbitmq", "url", "file"}
)

func outside(name string) bool {
	if outsideFunctions[name] {
		return true
	}
	for _, p := range outsidePrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// readOnlyStatement says why toks are not one statement that only reads.
func readOnlyStatement(toks []token) error {
	first := ""
	for i, t := range toks {
		if t.kind == punct && t.text == ";" {
			for _, rest := range toks[i+1:] {
				if rest.kind != punct || rest.text != ";" {
					return errors.New("send one statement at a time")
				}
			}
			break
		}
		if first == "" {
			if t.kind == punct && t.text == "(" {
				continue
			}
			if t.kind != word {
				return errors.New("the statement does not start with SELECT, WITH, SHOW, DESCRIBE, EXPLAIN or EXISTS")
			}
			first = strings.ToUpper(t.text)
		}
	}
	switch first {
	case "SELECT", "WITH", "SHOW", "DESCRIBE", "DESC", "EXPLAIN", "EXISTS":
		return nil
	case "":
		return errors.New("the statement is empty")
	}
	return fmt.Errorf("%s is not a read: this endpoint runs SELECT, WITH, SHOW, DESCRIBE, EXPLAIN and EXISTS only", first)
}

// tokenKind is what a token of a statement is.
type tokenKind int

const (
	word    tokenKind = iota // a keyword or a bare name
	quoted                   // a name in backquotes or double quotes
	literal                  // a string or a number
	punct                    // anything else
)

type token struct {
	kind tokenKind
	text string // a quoted name without its quotes
}

// lex cuts stmt into tokens as ClickHouse's lexer does, leaving out
// whitespace and comments. It is stricter than ClickHouse where the two
// could read a text differently: any Unicode space or format character
// separates words (ClickHouse skips some as whitespace), a letter is a
// word's, and what it cannot read for sure (an unterminated comment,
// string or name; a heredoc; # not starting a comment) is an error.
func lex(stmt string) ([]token, error) {
	var out []token
	s := stmt
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			return nil, errors.New("the statement is not valid UTF-8")
		case separator(r):
			s = s[size:]
		case strings.HasPrefix(s, "--"):
			s = skipLine(s)
		case r == '#':
			if len(s) > 1 && (s[1] == ' ' || s[1] == '!') {
				s = skipLine(s)
				continue
			}
			return nil, errors.New("a # that does not start a comment (# or #!) cannot be read")
		case strings.HasPrefix(s, "/*"):
			// ClickHouse's block comments nest: /* /* */ still open */.
			depth, i := 1, 2
			for depth > 0 {
				switch {
				case i >= len(s):
					return nil, errors.New("a comment is not closed")
				case strings.HasPrefix(s[i:], "/*"):
					depth, i = depth+1, i+2
				case strings.HasPrefix(s[i:], "*/"):
					depth, i = depth-1, i+2
				default:
					i++
				}
			}
			s = s[i:]
		case r == '\'' || r == '"' || r == '`':
			text, rest, err := quotedText(s, byte(r))
			if err != nil {
				return nil, err
			}
			kind := literal
			if r != '\'' {
				kind = quoted
			}
			out = append(out, token{kind, text})
			s = rest
		case r == '$':
			return nil, errors.New("$ (heredoc strings, $1 parameters) is not read by this endpoint; use '…' strings and {name:Type} parameters")
		case r == '_' || unicode.IsLetter(r):
			n := 0
			for n < len(s) {
				r, size := utf8.DecodeRuneInString(s[n:])
				if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					break
				}
				n += size
			}
			out = append(out, token{word, s[:n]})
			s = s[n:]
		case unicode.IsDigit(r):
			n := 0
			for n < len(s) && (s[n] == '.' || s[n] == '_' || s[n] < utf8.RuneSelf && (unicode.IsLetter(rune(s[n])) || unicode.IsDigit(rune(s[n])))) {
				n++
			}
			out = append(out, token{literal, s[:n]})
			s = s[n:]
		default:
			out = append(out, token{punct, s[:size]})
			s = s[size:]
		}
	}
	return out, nil
}

// separator reports whether r separates tokens: whitespace, and the
// invisible characters some editors paste (zero-width spaces and joiners,
// the byte-order mark).
func separator(r rune) bool {
	return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zs, r)
}

func skipLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return ""
}

// quotedText reads a string or quoted name that s starts with: a backslash
// escapes the next character, and a doubled quote is one quote.
func quotedText(s string, q byte) (text, rest string, err error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			b.WriteByte(s[i+1])
			i++
		case c == q && i+1 < len(s) && s[i+1] == q:
			b.WriteByte(q)
			i++
		case c == q:
			return b.String(), s[i+1:], nil
		default:
			b.WriteByte(c)
		}
	}
	if q == '\'' {
		return "", "", errors.New("a string is not closed")
	}
	return "", "", errors.New("a quoted name is not closed")
}
