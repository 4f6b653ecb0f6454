# bash completion for gpuadvise(1).
#
# The options come from `gpuadvise --help`, the rule ids for --explain from
# `gpuadvise --list-rules` and the demo names from `gpuadvise --demo list`,
# of the gpuadvise being completed: they are always those of that version.

_gpuadvise_help()
{
	"$1" --help 2>/dev/null | sed -n 's/^ *\(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z-]*=\{0,1\}\).*/\2/p'
}

# The values of option $2 for the gpuadvise $1; return 1 for a file name.
_gpuadvise_values()
{
	case $2 in
	--explain)
		"$1" --list-rules 2>/dev/null | sed -n '2,$s/ .*//p' ;;
	--demo)
		"$1" --demo list 2>/dev/null | sed 's/ .*//'
		printf '%s\n' list all ;;
	--format)
		printf '%s\n' text json markdown junit html sarif ;;
	--fail-on)
		printf '%s\n' low medium high regression ;;
	--color)
		printf '%s\n' auto always never ;;
	--nvtx)
		printf '%s\n' auto on off ;;
	--rules | --check-rules)
		return 2 ;;
	*)
		return 1 ;;
	esac
}

_gpuadvise()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local prog=${COMP_WORDS[0]} opt="" pre="" i w
	COMPREPLY=()

	# After PROGRAM, its own arguments: file names.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		-*) continue ;;
		=) i=$((i + 1)); continue ;;
		esac
		case ${COMP_WORDS[i - 1]} in
		-[cksio] | --*[!=]) _gpuadvise_takes_arg "$prog" "${COMP_WORDS[i - 1]}" && continue ;;
		esac
		COMPREPLY=($(compgen -f -- "$cur"))
		return
	done

	# --opt=value (bash splits at '=') and --opt value
	if [ "$prev" = "=" ] && [ "$COMP_CWORD" -ge 2 ]; then
		opt=${COMP_WORDS[COMP_CWORD - 2]}
	elif [[ $cur == --*=* ]]; then
		opt=${cur%%=*}
		pre=$opt=
		cur=${cur#*=}
	elif [[ $prev == -* ]] && _gpuadvise_takes_arg "$prog" "$prev"; then
		opt=$prev
	fi
	if [ -n "$opt" ]; then
		local values
		values=$(_gpuadvise_values "$prog" "$opt")
		case $? in
		0) COMPREPLY=($(compgen -P "$pre" -W "$values" -- "$cur")) ;;
		2) COMPREPLY=($(compgen -P "$pre" -d -- "$cur")) ;;
		*) COMPREPLY=($(compgen -P "$pre" -f -- "$cur")) ;;
		esac
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_gpuadvise_help "$prog")" -- "$cur"))
		# no space after an option that takes a value: --format=
		[[ ${COMPREPLY[0]-} == *= ]] && compopt -o nospace 2>/dev/null
		return
	fi
	COMPREPLY=($(compgen -c -- "$cur"))
}

# Whether option $2 of the gpuadvise $1 takes a value.
_gpuadvise_takes_arg()
{
	case $2 in
	-[cksio]) return 0 ;;
	esac
	_gpuadvise_help "$1" | grep -qx -- "$2="
}

complete -F _gpuadvise gpuadvise
