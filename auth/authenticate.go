package auth

import (
	"net/http"
	"strings"
)

// Authenticate wraps next so that every request carries an identity: the bearer
// token's when tokens are configured (401 otherwise), else the default
// tenant's, acting for the whole tenant.
func Authenticate(next http.Handler, tokens *Tokens, defaultTenant string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tokens == nil {
			next.ServeHTTP(w, r.WithContext(WithTenant(r.Context(), defaultTenant)))
			return
		}
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		var id Identity
		found := false
		if ok {
			id, found = tokens.Identity(strings.TrimSpace(token))
		}
		if !found {
			w.Header().Set("WWW-Authenticate", `Bearer realm="hindsight"`)
			http.Error(w, "unauthorized: send Authorization: Bearer <token> with a token from the server's token file", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(WithIdentity(r.Context(), id)))
	})
}
