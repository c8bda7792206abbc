package agent

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/BurntSushi/toml"
)

// CodexTrusted reports whether Codex trusts the project at dir: Codex loads a
// project's .codex/ hooks only in a trusted project, recorded in the user's
// ~/.codex/config.toml as [projects."<dir>"] trust_level = "trusted" (written when the
// person trusts the folder, or by `codex exec --trust`) (developers.openai.com/codex/hooks).
// Hooks must also be reviewed and trusted one by one in Codex's /hooks; that trust is
// Codex's own and not read here.
func CodexTrusted(home, dir string) (bool, error) {
	data, err := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var cfg struct {
		Projects map[string]struct {
			TrustLevel string `toml:"trust_level"`
		} `toml:"projects"`
	}
	if _, err := toml.Decode(string(data), &cfg); err != nil {
		return false, err
	}
	return cfg.Projects[dir].TrustLevel == "trusted", nil
}
