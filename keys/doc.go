// Package keys holds the deployment's keys (the memory console's cookie
// key, the redaction key of secret placeholders, the MCP session key)
// where no reader of the episodic store can take them: in a key file of
// the data directory when the stores are embedded, in the environment
// (from a Kubernetes Secret or the compose file's .env) in production.
//
// Whoever holds the console key can forge a sign-in cookie for any
// tenant, and whoever holds the redaction key can test guesses of a short
// password against its placeholder's hash; a key in the store's settings
// is readable by every analyst and every `hindsight sql`. Keys made by
// earlier versions were kept there: Open moves each one out on start (to
// the key file, or, in production, refuses to start until it is set in
// the environment, see Moved), and deletes its row, so that nothing
// already signed or hashed with it stops verifying.
package keys
