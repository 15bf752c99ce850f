# gpumerge.bash - bash completion for gpumerge: the subcommands (merge, sort,
# check) as the first word, the long and short options (sort's and gpumerge's),
# the values of --device, --kernel, --check and --sort, directories after -T,
# and file names elsewhere. Installed by `make install` as
# share/bash-completion/completions/gpumerge; or source it from ~/.bashrc.

_gpumerge()
{
    local cur prev words cword
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    cword=$COMP_CWORD
    # With '=' in COMP_WORDBREAKS (bash's default), --device=g arrives as the
    # words "--device" "=" "g": complete the value as if it were the next word.
    local eq=0
    if [[ $cur == = ]]; then
        cur= eq=1
    elif [[ $prev == = && $cword -ge 2 ]]; then
        prev=${COMP_WORDS[cword-2]} eq=1
    fi

    local longs="--check --check=quiet --check=silent --check=diagnose-first --merge
        --numeric-sort --output= --reverse --stable --unique --ignore-leading-blanks
        --ignore-case --sort=numeric --buffer-size= --temporary-directory= --batch-size=
        --parallel= --zero-terminated --files0-from= --verbose --progress --device=
        --kernel= --threads= --help --version"
    local shorts="-b -c -C -f -m -n -o -r -s -S -T -u -v -z"

    # A value given as --option=VALUE
    case $cur in
    --device=*)
        COMPREPLY=($(compgen -P --device= -W "auto cpu gpu" -- "${cur#--device=}"))
        return ;;
    --kernel=*)
        COMPREPLY=($(compgen -P --kernel= -W "auto basic tiled circular" -- "${cur#--kernel=}"))
        return ;;
    --check=*)
        COMPREPLY=($(compgen -P --check= -W "quiet silent diagnose-first" -- "${cur#--check=}"))
        return ;;
    --sort=*)
        COMPREPLY=($(compgen -P --sort= -W "numeric" -- "${cur#--sort=}"))
        return ;;
    --temporary-directory=*)
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -d -- "${cur#*=}"))
        return ;;
    --output=* | --files0-from=*)
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -f -- "${cur#*=}"))
        return ;;
    --buffer-size=* | --batch-size=* | --parallel=* | --threads=*)
        return ;;
    esac

    # A value given as the next word
    case $prev in
    --device)
        COMPREPLY=($(compgen -W "auto cpu gpu" -- "$cur"))
        return ;;
    --kernel)
        COMPREPLY=($(compgen -W "auto basic tiled circular" -- "$cur"))
        return ;;
    --check) # its value is optional, so only after '='
        if ((eq)); then
            COMPREPLY=($(compgen -W "quiet silent diagnose-first" -- "$cur"))
            return
        fi ;;
    --sort)
        COMPREPLY=($(compgen -W "numeric" -- "$cur"))
        return ;;
    -T | --temporary-directory)
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -d -- "$cur"))
        return ;;
    -o | --output | --files0-from)
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -f -- "$cur"))
        return ;;
    -S | --buffer-size | --batch-size | --parallel | --threads)
        return ;;
    esac

    case $cur in
    --*)
        COMPREPLY=($(compgen -W "$longs" -- "$cur"))
        # an option that takes =VALUE: no space after the '='
        [[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
        return ;;
    -*)
        COMPREPLY=($(compgen -W "$shorts $longs" -- "$cur"))
        return ;;
    esac

    # The first operand may be a subcommand.
    local i operands=0
    for ((i = 1; i < cword; i++)); do
        case ${COMP_WORDS[i]} in
        -o | -S | -T | --output | --buffer-size | --temporary-directory | --batch-size | \
            --parallel | --threads | --device | --kernel | --files0-from)
            ((i++)) ;;
        -*) ;;
        *) operands=$((operands + 1)) ;;
        esac
    done
    compopt -o filenames 2>/dev/null
    COMPREPLY=($(compgen -f -- "$cur"))
    if ((operands == 0)); then
        COMPREPLY+=($(compgen -W "merge sort check" -- "$cur"))
    fi
}
complete -F _gpumerge gpumerge
