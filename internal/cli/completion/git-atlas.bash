# bash completion for git atlas.
#
# Load it from ~/.bashrc:   source <(git atlas completion bash)
# Then `git atlas <TAB>` completes through git's own completion (which calls the
# _git_atlas function below) and `git-atlas <TAB>` completes too: commands, flags,
# and live values from the ledger (run ids, stages, jobs, nodes, snapshot ids).

# _git_atlas_reply CUR CMD...: COMPREPLY from the candidates CMD prints, one a line.
_git_atlas_reply() {
	local cur=$1
	shift
	local IFS=$'\n'
	COMPREPLY=($("$@" 2>/dev/null))
	# readline replaces only the text after a word break such as "=" (--format=d).
	if [[ $cur == *=* && $COMP_WORDBREAKS == *=* ]]; then
		COMPREPLY=("${COMPREPLY[@]#*=}")
	fi
}

# _git_atlas is what git's completion calls for `git atlas ...`, with words and cword
# set and git's own -C options in __git_C_args.
_git_atlas() {
	local i start=-1
	for ((i = 1; i < cword; i++)); do
		if [[ ${words[i]} == atlas ]]; then
			start=$((i + 1))
			break
		fi
	done
	((start < 0)) && return
	_git_atlas_reply "${words[cword]}" git "${__git_C_args[@]}" atlas __complete -- "${words[@]:start:cword-start+1}"
}

# _git_atlas_standalone completes `git-atlas ...`.
_git_atlas_standalone() {
	local words cword
	if declare -F _get_comp_words_by_ref >/dev/null; then
		_get_comp_words_by_ref -n =: -w words -i cword
	else
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	fi
	_git_atlas_reply "${words[cword]}" git-atlas __complete -- "${words[@]:1:cword}"
}

complete -o default -F _git_atlas_standalone git-atlas
