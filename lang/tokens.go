package lang

import (
	"sync"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// Tokens counts the tokens a language model's tokenizer makes of s, for
// budgeting prompts and context blocks: tiktoken's cl100k_base, the
// tokenizer of OpenAI's GPT-4-class models, with its BPE ranks embedded in
// the binary (tiktoken-go-loader), so that counting needs no network.
// Other models' tokenizers differ by a few percent. Should the tokenizer
// fail to load, it falls back to EstimateTokens.
func Tokens(s string) int {
	tok.once.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		tok.enc, tok.err = tiktoken.GetEncoding("cl100k_base")
	})
	if tok.err != nil || s == "" {
		return EstimateTokens(s)
	}
	return len(tok.enc.EncodeOrdinary(s))
}

var tok struct {
	once sync.Once
	enc  *tiktoken.Tiktoken
	err  error
}

// EstimateTokens approximates Tokens without a tokenizer: about four
// bytes of ASCII per token and one token per other character. It is
// within about a quarter of cl100k_base on Hindsight's texts (see
// TestTokens), generous on English prose and short on Chinese and hex
// IDs; Tokens is exact.
func EstimateTokens(s string) int {
	ascii, other := 0, 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			ascii++
			i++
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		other++
		i += n
	}
	return (ascii+3)/4 + other
}
