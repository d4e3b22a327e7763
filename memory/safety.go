package memory

import (
	"regexp"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Memory poisoning (AgentPoison and friends) works by getting text that
// speaks to the agent ("ignore previous instructions", "run this command")
// into a memory store, so that recall later injects it into a prompt.
// Hindsight never executes memory text, but it flags text that reads like an
// instruction aimed at the agent so that recall can show it with a warning
// and reviewers can find it.
//
// The patterns are deliberately narrow. Ordinary preferences and rules are
// imperatives too ("always use UTC", "never overwrite the raw table",
// "以后报表都用UTC时间"); flagging them would make the flag worthless. What
// sets injected text apart is that it talks about the agent's instructions,
// its identity, its system prompt, hiding things from the user, or running
// or sending something verbatim.
var instructionPatterns = []*regexp.Regexp{
	// Overriding earlier instructions.
	regexp.MustCompile(`\b(ignore|disregard|forget|override|bypass|skip)\b[^.\n]{0,20}\b(all|any|the|your|my|these|those)?\s*\b(previous|prior|above|earlier|preceding|original|existing|old)\s+(instructions?|prompts?|rules|directions|directives|guidelines|guardrails|context|messages?)\b`),
	regexp.MustCompile(`\b(ignore|disregard|override|bypass)\s+(all|any|your)\s+(instructions|rules|guidelines|guardrails|safety)\b`),
	// The system prompt, as a thing to reveal or override.
	regexp.MustCompile(`\b(ignore|disregard|reveal|print|show|leak|repeat|output|override|replace|change|dump)\b[^.\n]{0,30}\bsystem\s+(prompt|message|instructions?)\b`),
	regexp.MustCompile(`\bsystem\s+(prompt|message|instructions?)\b[^.\n]{0,30}\b(ignore|disregard|reveal|print|leak|repeat|override|replace|no longer)\b`),
	// Re-assigning the agent's role.
	regexp.MustCompile(`\byou\s+(must|will|should|shall)\s+now\b`),
	regexp.MustCompile(`\byou\s+are\s+now\b`),
	regexp.MustCompile(`\b(act|behave)\s+as\s+(if\s+you\s+(are|were)|an?\s+(unrestricted|unfiltered|jailbroken|different))\b`),
	regexp.MustCompile(`\bpretend\s+(to\s+be|you\s+are|that\s+you)\b`),
	regexp.MustCompile(`\b(new|updated|real|actual)\s+instructions\s*:`),
	regexp.MustCompile(`\b(jailbreak|developer\s+mode|dan\s+mode|do\s+anything\s+now)\b`),
	// Running or fetching something verbatim.
	regexp.MustCompile(`\b(run|execute|eval|paste)\s+(the\s+|this\s+)?(following|below)\b`),
	regexp.MustCompile(`\b(run|execute)\s+this\s+(command|script|code|payload)\b`),
	regexp.MustCompile(`\b(curl|wget)\b[^|\n]{0,200}\|\s*(sudo\s+)?(ba|z)?sh\b`),
	regexp.MustCompile(`\brm\s+-rf\s+(/|~|\$home|\*)`),
	// Exfiltration and secrecy.
	regexp.MustCompile(`\b(send|post|upload|forward|exfiltrate|email|leak)\b[^.\n]{0,40}\b(api[\s_-]?keys?|credentials|passwords?|secrets?|private\s+keys?|access\s+tokens?|env(ironment)?\s+variables)\b`),
	regexp.MustCompile(`\b(do\s+not|don't|never)\s+(tell|inform|alert|mention\s+(this|it)\s+to)\s+the\s+user\b`),
	regexp.MustCompile(`\bwithout\s+(telling|informing|asking)\s+the\s+user\b`),
	// Chat-template tokens smuggled into text.
	regexp.MustCompile(`<\|(im_start|im_end|system|endoftext)\|>|\[/?inst\]|<<sys>>|</?system>|^\s*#{2,}\s*(system|instruction)s?\b`),

	// Chinese.
	regexp.MustCompile(`(忽略|无视|忘记|忘掉|不要理会|别管|覆盖)(掉)?(你)?(之前|以前|先前|此前|上面|以上|前面|上述|原来|原有|所有)(的)?(所有|全部|一切)?(的)?(指令|指示|提示词?|规则|要求|设定|约束|命令)`),
	regexp.MustCompile(`系统提示词|系统指令|system\s*prompt`),
	regexp.MustCompile(`(忽略|无视|泄露|泄漏|输出|打印|显示|告诉我|重复|覆盖|修改|替换)[^。\n]{0,10}系统提示`),
	regexp.MustCompile(`(你|您)(现在|从现在起|从现在开始)(是|必须|要|应该|将|扮演)`),
	regexp.MustCompile(`从现在(起|开始)[，,]?\s*(你|您)(是|扮演|必须忽略|不再)`),
	regexp.MustCompile(`扮演(一个|一名)?[^。\n]{0,10}(角色|助手|AI|模型)|进入开发者模式|越狱`),
	regexp.MustCompile(`执行(以下|下面|如下|下列)(的)?(命令|指令|代码|脚本)`),
	regexp.MustCompile(`(不要|别|切勿)(告诉|通知|提醒)用户|瞒着用户|不让用户知道`),
	regexp.MustCompile(`(发送|上传|转发|发给|泄露)[^。\n]{0,20}(密钥|密码|凭证|令牌|token|api\s*key)`),
	regexp.MustCompile(`把[^。\n]{0,10}(密钥|密码|凭证|令牌|token|api\s*key)[^。\n]{0,20}(发送|上传|转发|发给|泄露)`),
}

// InstructionLike reports whether text reads like an instruction aimed at
// the agent itself — an override of its instructions, a new identity, a
// request to reveal its system prompt, to run something verbatim, to send
// secrets or to hide things from the user — rather than an ordinary
// preference, rule or lesson. It is conservative: "always give report
// timestamps in UTC" and "记住不要覆盖原始表" are not instruction-like. The
// pipeline marks matching memories with FlagInstructionLike.
func InstructionLike(text string) bool {
	if strings.TrimSpace(text) == "" {
		return false
	}
	// NFKC folds full-width letters and punctuation, so "ｉｇｎｏｒｅ" and
	// "ignore" match alike; lower case folds "IGNORE PREVIOUS INSTRUCTIONS".
	t := strings.ToLower(norm.NFKC.String(text))
	t = strings.Join(strings.Fields(t), " ")
	for _, re := range instructionPatterns {
		if re.MatchString(t) {
			return true
		}
	}
	return false
}
