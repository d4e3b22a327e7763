// Package offline distils transcripts and embeds text without a model
// endpoint: the deterministic defaults Hindsight runs with when no LLM or
// embedding endpoint is configured, and the baseline the LLM-backed
// components are compared against.
//
// NewExtractor returns a memory.Extractor of rules and small learned
// sentence classifiers (lang/classify, embedded in the binary), in English
// and Chinese. It reads tool calls, errors and the user's and agent's
// messages and produces:
//
//   - the task (the platform's, else the first substantive user request)
//     and a task type from keyword rules (see llm.TaskTypes);
//   - the key steps: tool calls that succeeded, in order, deduplicated;
//   - failures with their causes: tool errors, error-looking output
//     (tracebacks, "Error:", DB exceptions), and users saying it did not
//     work ("still failing", "报错", "不行");
//   - lessons from failure→fix pairs: the fix's changed parameters
//     ("use encoding='gbk'"), added flags ("--wait --timeout 10m"), a setup
//     step run before an identical retry ("run `pip install openpyxl`"), or
//     swapped identifiers ("order_time instead of ordered_at"), each with
//     a counter-example saying what failed and why;
//   - lessons from the agent's findings (a root cause, a fix and why it
//     worked, a gotcha), the sentences the agent classifier keeps: they
//     word the lesson of the failure→fix pair they explain, or make one of
//     their own when the classifier is confident;
//   - preferences, rules and facts from the user sentences the user
//     classifier keeps ("from now on", "always", "never", "以后", "不要",
//     "记住", "我们用的是…"), in the user's own words and language;
//     questions, one-off requests and the assistant's own promises are not
//     memories;
//   - entities, the outcome and the user's feedback.
//
// Every candidate cites the IDs of the events that support it. The output
// depends only on the transcript: no clock, no randomness, no map order.
//
// NewEmbedder returns a memory.Embedder of hashed character n-grams (CJK
// unigrams and bigrams, word tokens and boundary-marked 3/4-grams for other
// scripts) with signed feature hashing, sublinear term frequency and L2
// normalisation: lexical similarity that works across English and Chinese
// without a model.
package offline
