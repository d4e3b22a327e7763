package memory

import (
	"strings"

	"github.com/hindsight-memory/hindsight/lang/inject"
)

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
// lang/inject: its data, held-out evaluation and scores).

// Injected reports whether text reads as an instruction aimed at the agent
// itself, working against its operator or user — an override of its
// instructions, forged authority or consent, a new identity, secrets to
// reveal or send, harm to do or hide — rather than knowledge about the
// work. The pipeline quarantines such memories.
func Injected(text string) bool {
	if strings.TrimSpace(text) == "" {
		return false
	}
	return inject.Attack(text)
}

// Screen reads text once for both: whether it is Injected, and whether it
// is InstructionLike.
func Screen(text string) (injected, instructionLike bool) {
	if strings.TrimSpace(text) == "" {
		return false, false
	}
	return inject.Read(text)
}

// InstructionLike reports whether text comes close to reading as an
// injection (Injected, or near it): the pipeline marks such memories with
// FlagInstructionLike, and recall shows them with a warning.
func InstructionLike(text string) bool {
	if strings.TrimSpace(text) == "" {
		return false
	}
	return inject.Suspect(text)
}
