# gpumerge.bash - bash completion for gpumerge: the subcommands (merge, sort,
# check, help) as the first operand, the long and short options (sort's and
# gpumerge's), the values of --device, --kernel, --check and --sort, directories
# after -T, commands after --compress-program, and file names elsewhere.
# Installed by `make install` as share/bash-completion/completions/gpumerge; or
# source it from ~/.bashrc.

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
        --numeric-sort --general-numeric-sort --human-numeric-sort --key= --field-separator=
        --output= --reverse --stable --unique --ignore-leading-blanks --ignore-case --sort=
        --buffer-size= --temporary-directory= --compress-program= --batch-size= --parallel=
        --zero-terminated
        --files0-from= --strict --verbose --progress --device= --gpu= --kernel= --threads=
        --help --version"
    local shorts="-b -c -C -f -g -h -k -m -n -o -r -s -S -t -T -u -v -z"
    local sorts="numeric general-numeric human-numeric"

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
        COMPREPLY=($(compgen -P --sort= -W "$sorts" -- "${cur#--sort=}"))
        return ;;
    --temporary-directory=*)
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -d -- "${cur#*=}"))
        return ;;
    --output=* | --files0-from=*)
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -f -- "${cur#*=}"))
        return ;;
    --compress-program=*)
        COMPREPLY=($(compgen -c -- "${cur#*=}"))
        return ;;
    --buffer-size=* | --batch-size=* | --parallel=* | --threads=* | --key=* | \
        --field-separator=* | --gpu=*)
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
        COMPREPLY=($(compgen -W "$sorts" -- "$cur"))
        return ;;
    -T | --temporary-directory)
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -d -- "$cur"))
        return ;;
    -o | --output | --files0-from)
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -f -- "$cur"))
        return ;;
    --compress-program)
        COMPREPLY=($(compgen -c -- "$cur"))
        return ;;
    -S | --buffer-size | --batch-size | --parallel | --threads | -k | --key | -t | \
        --field-separator | --gpu)
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

    # The first operand may be a subcommand: count the operands before this word,
    # past the options' values (a next word, or "=" and a word where '=' breaks
    # words, as in --device = gpu).
    local i w operands=0 dashes=0
    for ((i = 1; i < cword; i++)); do
        w=${COMP_WORDS[i]}
        if [[ ${COMP_WORDS[i+1]} == = ]] && ((i + 1 < cword)); then
            ((i += 2))
            continue
        fi
        case $w in
        --) # no subcommand after it
            dashes=1
            break ;;
        --output | --buffer-size | --temporary-directory | --batch-size | --parallel | \
            --threads | --device | --gpu | --kernel | --files0-from | --key | --field-separator | \
            --sort | --compress-program | --random-source)
            ((i++)) ;;
        --*) ;;
        -?*) # a cluster: an option taking a value takes the rest, or the next word
            w=${w#-}
            while [[ -n $w ]]; do
                case ${w:0:1} in
                [koStT])
                    [[ -z ${w:1} ]] && ((i++))
                    break ;;
                esac
                w=${w:1}
            done ;;
        *) operands=$((operands + 1)) ;;
        esac
    done
    compopt -o filenames 2>/dev/null
    COMPREPLY=($(compgen -f -- "$cur"))
    if ((operands == 0 && !dashes)); then
        COMPREPLY+=($(compgen -W "merge sort check help" -- "$cur"))
    fi
}
complete -F _gpumerge gpumerge
