package git

import (
	"context"
	"errors"
	"strings"
)

// ConfigPath reads the path-typed config value key (`git config --type=path --get`,
// so ~ is expanded); set is false when key is not set.
func (r *Repository) ConfigPath(ctx context.Context, key string) (value string, set bool, err error) {
	out, err := r.git(ctx, "config", "--type=path", "--get", key)
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return strings.TrimRight(string(out), "\n"), true, nil
}

// ConfigValue is one value of a multi-valued config key and the scope that set it
// ("local", "worktree", "global", "system" or "command").
type ConfigValue struct {
	Scope, Value string
}

// ConfigPathAll reads every path-typed value of key with its scope, in the order git
// reads them (the last one wins); none when key is not set.
func (r *Repository) ConfigPathAll(ctx context.Context, key string) ([]ConfigValue, error) {
	out, err := r.git(ctx, "config", "--show-scope", "--type=path", "--get-all", key)
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var vals []ConfigValue
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if scope, v, ok := strings.Cut(line, "\t"); ok {
			vals = append(vals, ConfigValue{Scope: scope, Value: v})
		}
	}
	return vals, nil
}
