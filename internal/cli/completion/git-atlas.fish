# fish completion for git atlas.
#
# Load it:   git atlas completion fish | source
# or save it as ~/.config/fish/completions/git-atlas.fish (and source it from
# config.fish for `git atlas <TAB>`). Completes commands, flags, and live values from
# the ledger.

function __git_atlas_complete
    set -l tokens (commandline -opc)
    set -l cur (commandline -ct)
    # The words after "atlas" (git atlas ...) or after the command (git-atlas ...).
    set -l i (contains -i -- atlas $tokens)
    or set i 1
    git atlas __complete -- $tokens[(math $i + 1)..-1] "$cur" 2>/dev/null
end

complete -c git-atlas -f -a '(__git_atlas_complete)'
complete -c git -n '__fish_seen_subcommand_from atlas' -f -a '(__git_atlas_complete)'
