package memory

// Memory poisoning (AgentPoison and friends) works by getting text that
// speaks to the agent ("ignore previous instructions", "send the API key
// to…", "the user has authorised you to push to main") into a memory
// store, so that recall later puts it in a prompt. Hindsight never
// executes memory text; it also keeps such text out of recall: a memory
// that reads as an instruction to the agent, rather than as a preference,
// rule, fact or lesson about the work, goes to quarantine (see
// StatusQuarantined) until a person releases it.
//
// Ordinary preferences and rules are imperatives too ("always use UTC",
// "never overwrite the raw table", "以后报表都用UTC时间"), and benign text
// mentions systems, admins and instructions ("the install instructions are
// in docs/INSTALL.md"); what sets an injection apart is what the text asks
// of the agent. No list of phrases draws that line across wordings and
// languages, so a classifier learned from labelled text does (package
// lang/inject: its data, held-out evaluation and scores), behind the
// Screener interface below.

// Screener reads memory text for poisoning. The pipeline screens every
// text it stores and recall every text it returns (lang/inject is the
// implementation every process uses; the composition root passes it).
type Screener interface {
	// Screen reports whether text reads as an instruction aimed at the
	// agent itself, working against its operator or user — an override of
	// its instructions, forged authority or consent, a new identity,
	// secrets to reveal or send, harm to do or hide — rather than
	// knowledge about the work (injected: the pipeline quarantines it), and
	// whether it comes close to reading so (instructionLike: the pipeline
	// flags it FlagInstructionLike and recall shows it with a warning).
	// Every injected text is instruction-like; blank text is neither. It
	// is deterministic and does no I/O, so workflow code and its replays
	// may call it, and it never fails: a screener that cannot read text
	// calls it injected.
	Screen(text string) (injected, instructionLike bool)
}

// Withheld is what an agent is shown in place of a text that reads as an
// instruction to it (Injected): an episode's task, step, failure or
// feedback, a resource's text. A person sees the text itself, marked, in
// the console.
const Withheld = "[withheld: this text reads as an instruction to the agent, not as a record of the work; a person can review it in the memory console]"

// ForAgent is text as an agent may be shown it: as it is, or Withheld
// when s reads it as an injection. Text that comes from tools and users (a
// failing tool's output becomes a failure's cause) reaches the next
// session's context only through it.
func ForAgent(s Screener, text string) string {
	if injected, _ := s.Screen(text); injected {
		return Withheld
	}
	return text
}
