package gitstate

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// sessionKeyFile is the key's local state file: the key that seals session ids in the
// ledger (ledger.SessionKey, docs/contract.md §5.1), made once, never pushed.
const sessionKeyFile = "session-key"

// LoadSessionKey reads the repository's key, making it (32 random bytes) the first
// time.
func LoadSessionKey(repo *git.Repository) (ledger.SessionKey, error) {
	data, err := repo.LocalOnce(sessionKeyFile, func() ([]byte, error) {
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return nil, err
		}
		return []byte(hex.EncodeToString(k) + "\n"), nil
	})
	if err != nil {
		return ledger.SessionKey{}, fmt.Errorf("the session key (local state): %w", err)
	}
	k, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(k) < 16 {
		return ledger.SessionKey{}, fmt.Errorf("the session key %s is damaged: remove it (sessions then take their runs back by holder name only)", repo.LocalPath(sessionKeyFile))
	}
	return ledger.NewSessionKey(k), nil
}
