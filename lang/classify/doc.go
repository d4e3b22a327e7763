// Package classify holds the small learned models that read sentences of
// a session for the offline write path: which sentences a user wrote
// state something lasting (a preference, a rule, a fact) and which are
// chatter or the task at hand, and which sentences an agent wrote state a
// reusable finding (a root cause, a fix and why it worked, a gotcha) and
// which are plans, guesses and status.
//
// The models are multinomial logistic regressions (package learn) over
// sparse features of one sentence (see Features): word unigrams and bigrams (English folded
// and stemmed), Chinese character unigrams, bigrams and trigrams, the
// shapes of values (numbers, flags, paths, e-mail addresses, code) rather
// than the values themselves, and where the sentence sits in the session
// (the opening request, later turns, the agent's closing summary).
// Features are the same in training and in use, so a model carries over
// to wordings it has never seen as far as its features do.
//
// They are trained by Train, deterministically, on the labelled messages
// in data/ (written by hand for this purpose, English and Chinese, across
// many domains; see data/README.md), with `hindsight train classifiers`
// (or `go generate` here). The trained weights ship in models/ as small
// gzipped text files, embedded in the binary; each records the SHA-256 of
// the data it was trained on, and a test fails when the data changed
// without a retrain.
package classify
