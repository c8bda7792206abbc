#compdef git-atlas
# zsh completion for git atlas.
#
# Load it from ~/.zshrc, after compinit:   source <(git atlas completion zsh)
# Then `git atlas <TAB>` completes through zsh's git completion (which calls the
# _git-atlas function below for the atlas subcommand) and `git-atlas <TAB>` too:
# commands, flags, and live values from the ledger.

_git-atlas() {
	local -a cands
	# Under _git, words[1] is "atlas"; as git-atlas, words[1] is "git-atlas".
	cands=("${(@f)$(git atlas __complete -- "${(@)words[2,CURRENT]}" 2>/dev/null)}")
	cands=(${cands:#})
	compadd -Q -- "${cands[@]}"
}

compdef _git-atlas git-atlas
