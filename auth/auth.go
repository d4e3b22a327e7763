package auth

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/hindsight-memory/hindsight/memory"
)

type tenantKey struct{}

// WithTenant returns ctx carrying the caller's tenant.
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// TenantFrom returns the tenant ctx carries, or "".
func TenantFrom(ctx context.Context) string {
	t, _ := ctx.Value(tenantKey{}).(string)
	return t
}

type userKey struct{}

// WithUser returns ctx carrying the user the caller's credentials are
// bound to: the only user it may act for.
func WithUser(ctx context.Context, userID string) context.Context {
	return context.WithValue(ctx, userKey{}, userID)
}

// UserFrom returns the user ctx's credentials are bound to, or "" when
// they act for the whole tenant.
func UserFrom(ctx context.Context) string {
	u, _ := ctx.Value(userKey{}).(string)
	return u
}

// Identity is what a token stands for: a tenant, and optionally the one
// user of it the token may act for.
type Identity struct {
	Tenant string
	UserID string
}

// Tokens maps bearer tokens to identities.
type Tokens struct {
	byHash map[[32]byte]Identity
}

// LoadTokens reads a token file: one "tenant token [user]" line per token;
// blank lines and lines starting with # are ignored. A token with a user
// acts for that user only, whatever the arguments say. Tokens must be at
// least 16 characters and unique.
func LoadTokens(path string) (*Tokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	defer f.Close()
	t := &Tokens{byHash: map[[32]byte]Identity{}}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 && len(fields) != 3 {
			return nil, fmt.Errorf("token file %s line %d: want \"tenant token\" or \"tenant token user\"", path, n)
		}
		tenant, token := fields[0], fields[1]
		user := ""
		if len(fields) == 3 {
			user = fields[2]
			if !memory.UserScope(user).Valid() {
				return nil, fmt.Errorf("token file %s line %d: user %q is not a valid user ID", path, n, user)
			}
		}
		if err := memory.ValidateTenant("token file", tenant); err != nil {
			return nil, fmt.Errorf("token file %s line %d: %w", path, n, err)
		}
		if len(token) < 16 {
			return nil, fmt.Errorf("token file %s line %d: the token is shorter than 16 characters", path, n)
		}
		h := sha256.Sum256([]byte(token))
		if _, dup := t.byHash[h]; dup {
			return nil, fmt.Errorf("token file %s line %d: the token is used twice", path, n)
		}
		t.byHash[h] = Identity{Tenant: tenant, UserID: user}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	if len(t.byHash) == 0 {
		return nil, fmt.Errorf("token file %s has no tokens", path)
	}
	return t, nil
}

// Identity returns what a bearer token stands for. Tokens are looked up
// by their SHA-256, so lookup time says nothing about a token's prefix.
func (t *Tokens) Identity(token string) (Identity, bool) {
	id, ok := t.byHash[sha256.Sum256([]byte(token))]
	return id, ok
}

// Authenticate wraps next so that every request carries a tenant: from
// the bearer token when tokens are configured (401 otherwise), else the
// default tenant.
func Authenticate(next http.Handler, tokens *Tokens, defaultTenant string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tokens == nil {
			next.ServeHTTP(w, r.WithContext(WithTenant(r.Context(), defaultTenant)))
			return
		}
		auth := r.Header.Get("Authorization")
		token, ok := strings.CutPrefix(auth, "Bearer ")
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
		ctx := WithTenant(r.Context(), id.Tenant)
		if id.UserID != "" {
			ctx = WithUser(ctx, id.UserID)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
