package inject

import (
	"regexp"
	"strings"
)

// A cue is a kind of word an injection is made of, whichever word says it:
// who is addressed (you, the assistant, 助手), an annulment (ignore,
// void, rescind, 作废), what is annulled (rules, guidance, 设定), a
// permission claimed (authorised, cleared, 授权), a secret, a way out
// (send, paste, embed, 转发), a public place (anyone, gist, 公开), a
// destruction (wipe, revoke, 清空), a sweep (every, all, 所有), hiding
// (quietly, no trace, 悄悄), a claim of authority (administrator,
// headquarters, 总部), a persona (pretend, jailbroken, 扮演) and the live
// system (production, main, 线上); and what tells a text apart that only
// speaks of an instruction or tells the agent to ignore a nuisance (a
// mention, a warning). Features adds each pair of cues a
// text holds, so that a pair learnt from some words ("your
// rules are void") carries to others of the same kinds ("the guidance you
// booted with has lapsed").
type cue struct {
	name string
	// words are English word beginnings, matched against each word of
	// the normalized text; han are Chinese words, found anywhere in it.
	words []string
	han   []string
}

var cues = []cue{
	{"agent", []string{"you", "your", "yourself", "assistant", "agent", "bot", "model", "ai", "chatbot", "copilot"},
		[]string{"你", "助手", "智能体", "机器人", "模型"}},
	{"annul", []string{"ignor", "disregard", "forget", "forgot", "overrid", "overrul", "supersed", "void", "null", "revok", "rescind", "repeal",
		"withdr", "retire", "obsolet", "expire", "lapse", "lift", "suspend", "discard", "abandon", "scrap", "unlearn", "countermand",
		"invalid", "annul", "waive", "disobey", "defy", "set aside", "no longer", "cancel", "outdated", "superseded", "moot", "dismiss", "bypass", "circumvent", "drop", "pay no attention", "pay no heed", "put aside", "shelve", "stop following", "stop obeying", "outrank", "take precedence", "trump", "supplant", "exempt", "not binding", "no longer appl", "replaced by"},
		[]string{"忽略", "无视", "忘记", "忘掉", "作废", "失效", "废止", "取消", "撤销", "覆盖", "不再", "过期", "丢掉", "抛开", "放一边", "绕过", "不用遵守", "不必遵守", "无效", "不作数", "不算数", "不适用", "暂停", "搁置", "不必理会", "别管", "不用管", "推翻", "优先于", "高于"}},
	{"rules", []string{"rule", "instruction", "guidance", "guideline", "polic", "directive", "prompt", "brief", "guardrail", "constraint",
		"limit", "restriction", "configur", "setup", "mandate", "charter", "principle", "boundar", "safeguard", "filter", "order", "setting",
		"framework", "programming", "protocol", "safety", "alignment", "ethic", "norm", "governance", "code of conduct", "terms", "direction", "briefing", "training", "conditioning", "values"},
		[]string{"规则", "指令", "设定", "限制", "规定", "方针", "准则", "提示", "约束", "政策", "规范", "配置", "边界", "指导", "要求", "守则", "底线", "安全策略", "条款", "约定", "初始设置"}},
	{"consent", []string{"authori", "authoriz", "approv", "permission", "permit", "allowed", "allow", "cleared", "consent", "okay", "ok'd", "okd",
		"signed off", "sign off", "green light", "bless", "sanction", "entitle", "pre-approv", "preapprov", "pre-clear", "greenlit", "waiver", "approval", "authorization", "authorisation", "go-ahead", "go ahead", "clearance", "carte blanche", "free hand", "free rein", "free to", "pre-authori"},
		[]string{"授权", "同意", "批准", "允许", "准许", "许可", "批了", "默许", "点头", "放行", "首肯", "特批", "签字", "准了", "全权", "放手"}},
	{"secret", []string{"xsecret", "pin", "cvv", "seed phrase", "ssn", "cookie", "passcode", "otp", "one-time code", "recovery code", "backup code", "confidential", "salary", "salaries"},
		[]string{"密码", "密钥", "私钥", "令牌", "凭证", "助记词", "验证码", "身份证", "卡号", "动态码", "恢复码", "工资条", "机密"}},
	{"out", []string{"send", "sent", "post", "paste", "upload", "forward", "email", "mail", "share", "publish", "attach", "includ", "embed",
		"append", "copy", "copied", "copies", "leak", "expos", "reveal", "print", "echo", "dump", "relay", "sync", "export", "bcc", "tweet", "transmit",
		"disclos", "tell", "read out", "output", "tuck", "insert", "put", "curl", "wget", "fetch", "beacon", "exfiltrat", "broadcast", "display", "show", "repeat", "recite", "smuggle", "stash", "mirror", "replicate", "cc", "dm", "message", "text", "exfil", "beam", "ship"},
		[]string{"发给", "发送", "发到", "贴", "上传", "转发", "分享", "公布", "附上", "嵌入", "抄送", "复制", "导出", "透露", "告诉", "输出", "复述", "同步", "发在", "写进", "放进", "外发", "传到", "泄露", "发出去", "带出", "镜像", "贴到", "传给"}},
	{"public", []string{"public", "anyone", "anybody", "everyone", "open link", "gist", "pastebin", "xurl", "xemail", "xhost", "webhook",
		"channel", "chat", "forum", "noticeboard", "external", "outside", "third part", "press", "link", "issue", "comment", "footer", "header", "subject", "query", "discord", "slack", "telegram", "whatsapp", "twitter", "reddit", "status page", "wiki", "bucket", "paste", "world-readable", "unauthenticated", "stranger"},
		[]string{"公开", "任何人", "所有人", "群", "外部", "对话", "聊天", "网盘", "链接", "频道", "论坛", "微博", "朋友圈", "微信", "公共", "陌生人"}},
	{"destroy", []string{"delet", "drop", "truncat", "wipe", "purg", "eras", "remov", "destroy", "disabl", "revok", "kill", "shut", "empt",
		"overwrit", "zero", "reset", "unlock", "terminat", "deactivat", "decommission", "nuke", "scrub", "clear", "silenc", "mute",
		"turn off", "switch off", "force-push", "force push", "rm -rf", "expire", "corrupt", "sabotag", "flood", "maximum", "cancel", "deprovision", "tear down", "teardown", "uninstall", "take down", "offline", "brick", "lock out", "downgrade", "disconnect", "unplug", "flush", "shred", "roll back"},
		[]string{"删除", "删掉", "清空", "清除", "关闭", "关掉", "吊销", "注销", "格式化", "清零", "禁用", "停用", "撤销", "销毁", "抹掉", "静音", "调到最高", "调高", "强制推送", "卸载", "下线", "拆除", "断开", "拔掉", "回滚", "粉碎", "终止", "作废", "取消"}},
	{"sweep", []string{"all", "every", "entire", "whole", "any", "everything", "whatever", "anything", "unlimited", "without", "no matter", "regardless"},
		[]string{"所有", "全部", "一切", "任何", "全都", "每", "不管", "无论", "不经", "直接"}},
	{"hide", []string{"quiet", "silent", "secretly", "covert", "hide", "hidden", "conceal", "no trace", "nobody", "no one", "don't tell", "do not tell",
		"never tell", "don't mention", "do not mention", "never mention", "without telling", "cover", "disguis", "pretend",
		"unnoticed", "won't notice", "between us", "off the record", "under the radar", "lie", "deny", "keep quiet", "keep it quiet", "without mentioning", "without saying", "stealth", "discreet", "unannounced", "on the sly", "to yourself", "behind their back", "undetected"},
		[]string{"悄悄", "偷偷", "隐藏", "不要告诉", "别告诉", "不要提", "别提", "瞒", "伪装", "装作", "痕迹", "不要让", "别让", "不要透露", "假装", "保密", "别声张", "不要声张", "不动声色", "暗中", "私下", "神不知鬼不觉", "不露痕迹", "别说"}},
	{"authority", []string{"admin", "administrator", "root", "ceo", "cto", "cfo", "director", "headquarter", "official", "notice", "directive",
		"vendor", "provider", "developer", "operator", "owner", "security team", "compliance", "management", "board", "executive", "head of", "priority", "override", "openai", "anthropic", "broadcast"},
		[]string{"系统通知", "系统消息", "系统指令", "系统公告", "系统管理员", "【系统", "来自系统", "管理员", "总监", "老板", "官方", "通知", "指示", "命令", "总部", "平台", "开发者", "主管", "负责人", "管理层", "公告"}},
	{"persona", []string{"pretend", "simulat", "role", "roleplay", "role-play", "persona", "act as", "act like", "imperson", "emulat", "become", "imagin", "jailbr",
		"unrestrict", "uncensor", "unfilter", "unlock", "mode", "character", "pose as", "play", "version of", "twin", "dan", "evil", "unchained", "unbound", "liberated", "no limits", "god mode", "alter ego", "rogue", "hypothetical", "fiction", "story", "novel", "screenplay", "in character", "game"},
		[]string{"扮演", "假装", "假设", "模拟", "冒充", "角色", "人格", "模式", "越狱", "设想", "当成", "剧本", "小说", "故事", "游戏", "另一个你", "无限制", "不受约束"}},
	// An instruction mentioned rather than given: "a memory that tells the
	// agent to ignore its rules is quarantined", "such instructions".
	{"mention", []string{"tells", "telling", "asks", "asking", "says", "saying", "claims", "claiming", "such", "contain", "flag", "quarantin",
		"reject", "suspicious", "attack", "injection", "phishing", "red flag", "example", "quote", "quoting", "classifier", "detector", "filter"},
		[]string{"声称", "自称", "这类", "之类", "标记", "拦截", "攻击", "注入", "隔离", "举报", "诈骗", "钓鱼", "例子", "例如"}},
	// What one may ignore without harm: "you can ignore the lint warning".
	{"noise", []string{"warning", "warn", "alert", "error", "notification", "popup", "pop-up", "reminder", "light", "beep", "chime", "hum", "typo",
		"whitespace", "spam", "newsletter", "nitpick", "lint", "deprecat", "noise", "glitch", "flicker", "duplicate", "receipt", "emoji", "reaction",
		"case", "accent", "blank", "comment", "dialog", "banner", "badge", "spike", "reading"},
		[]string{"警告", "报错", "提醒", "弹窗", "错别字", "空格", "大小写", "垃圾", "噪音", "嗡嗡", "重复", "表情", "点赞", "读数", "提示音", "闪烁"}},
	{"live", []string{"production", "prod", "live", "main", "master", "customer", "patient", "payroll", "bank", "fund", "money", "payment", "xmoney", "iban", "account"},
		[]string{"生产", "线上", "主分支", "客户", "病人", "工资", "银行", "转账", "付款", "账户"}},
}

// cueFeatures are the pairs of cues of t, a normalized text whose words
// are words: "cc:annul_rules". One cue alone says no more than its word
// does, and as a feature of most texts it would only move the intercept.
func cueFeatures(t string, words []string) []string {
	joined := " " + strings.Join(words, " ") + " "
	var have []string
	for _, c := range cues {
		if hasCue(c, t, words, joined) {
			have = append(have, c.name)
		}
	}
	out := make([]string, 0, len(have)*(len(have)-1)/2)
	for i, a := range have {
		for _, b := range have[i+1:] {
			out = append(out, "cc:"+a+"_"+b)
		}
	}
	return out
}

// systemSpeaks is "system" as the one who speaks ("SYSTEM:", "[system
// override]", "system notice"), not as a thing ("the system prompt", "the
// booking system"), which says nothing of authority.
var systemSpeaks = regexp.MustCompile(`(?:^|[\[<(#*{|【])\s*system\b|\bsystem\s*(?::|\]|>|message|notice|update|override|directive|announcement|alert|command|broadcast|admin)`)

func hasCue(c cue, t string, words []string, joined string) bool {
	if c.name == "authority" && systemSpeaks.MatchString(t) {
		return true
	}
	for _, h := range c.han {
		if strings.Contains(t, h) {
			return true
		}
	}
	for _, p := range c.words {
		if strings.ContainsAny(p, " -'") {
			if strings.Contains(joined, " "+p) || strings.Contains(" "+t, " "+p) {
				return true
			}
			continue
		}
		for _, w := range words {
			if prefixWord(w, p) {
				return true
			}
		}
	}
	return false
}

// prefixWord reports whether w begins with p: a beginning of six letters
// or more begins any word, a shorter one only its inflections ("role",
// "roles", but not "rolex"; "you", "your"; "scrap", "scrapped", but not
// "scraped").
func prefixWord(w, p string) bool {
	rest, ok := strings.CutPrefix(w, p)
	if !ok {
		return false
	}
	if len(p) >= 6 {
		return true
	}
	if rest == "" || inflections[rest] {
		return true
	}
	// A doubled last letter: "drop" → "dropped", "dropping".
	if len(rest) > 1 && rest[0] == p[len(p)-1] {
		return inflections[rest[1:]]
	}
	return false
}

var inflections = map[string]bool{"s": true, "es": true, "d": true, "ed": true, "ing": true, "r": true, "e": true, "y": true,
	"ies": true, "ied": true, "ly": true, "er": true, "ers": true}
