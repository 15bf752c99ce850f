#!/usr/bin/env python3
"""gen.py - writes testdata/compat's cases from coreutils' sort tests.

Reads the JSON dump of a coreutils test script's @Tests (dump.pl), and for each
case gpumerge can run writes a folder: its inputs, cmd, and the expected bytes,
error output and status as the installed `LC_ALL=C sort` gives them.  A case
whose options name no order (sort compares bytes, gpumerge implies -n) runs as
written when order cannot matter (an error before any line is read, no two
different lines), else with -n added when that leaves its output as coreutils expects
it (a note file says so), else it is left out.  Prints one line a case: what
was done and why.  A case run as written on lines that hold no number gets
gpumerge's one warning about them in expected.err and a differs file by hand
(testdata/compat/README): --keep-existing keeps those.

usage: perl dump.pl sort.pl > sort.json
       gen.py PREFIX DUMP.json OUTDIR [--keep-existing]
(PREFIX: sort-, merge- or files0-; --keep-existing leaves the folders already
there as they are; GEN_SKIP="NAME reason;..." leaves cases out.)
"""
import json, os, re, shutil, subprocess, sys, tempfile

REFUSED_FLAGS = re.compile(r'(^|\s)-[a-zA-Z]*[diMRVf][a-zA-Z]*(\s|$)|--sort=(random|month|version)|--random|--debug')
KEY_REFUSED = re.compile(r'-k\s*[0-9.,bghnr]*[dfiMRV]')


def b(s):
    return s.encode('latin-1')


def order_named(opts):
    toks = opts.split()
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.startswith('--'):
            if re.match(r'--sort=(numeric|general-numeric|human-numeric)', t) or \
               t in ('--numeric-sort', '--general-numeric-sort', '--human-numeric-sort'):
                return True
        elif t.startswith('-') and len(t) > 1:
            body = t[1:]
            j = 0
            while j < len(body):
                c = body[j]
                if c in 'ngh':
                    return True
                if c in 'kTotS':  # an option with an argument
                    rest = body[j + 1:] or (toks[i + 1] if i + 1 < len(toks) else '')
                    if not body[j + 1:]:
                        i += 1
                    if c == 'k' and re.search(r'[ngh]', re.sub(r'[0-9.,]', '', rest)):
                        return True
                    break
                j += 1
        i += 1
    return False


def run_sort(cmd, files):
    d = tempfile.mkdtemp()
    try:
        for name, data in files.items():
            with open(os.path.join(d, name), 'wb') as f:
                f.write(data)
        p = subprocess.run('LC_ALL=C sort </dev/null ' + cmd, shell=True, cwd=d,
                           capture_output=True)
        return p.stdout, p.stderr, p.returncode
    finally:
        shutil.rmtree(d)


def ours(err):
    err = re.sub(rb'(?m)^sort: ', b'gpumerge: ', err)
    return err.replace(b"Try 'sort --help'", b"Try 'gpumerge --help'")


def parse_case(t):
    name, rest = t[0], t[1:]
    args, inputs, aux, spec = [], [], {}, {}
    for e in rest:
        if isinstance(e, str):
            args.append(e)
        elif 'IN' in e:
            v = e['IN']
            inputs.append(('in', v) if isinstance(v, str) else list(v.items())[0])
        elif 'AUX' in e:
            v = e['AUX']
            if isinstance(v, str):
                aux['aux'] = v
            else:
                aux.update(v)
        else:
            spec.update(e)
    return name, ' '.join(args).replace('@AUX@', 'aux'), inputs, aux, spec


def write_case(dest, cmd, files, note):
    out, err, rc = run_sort(cmd, files)
    os.makedirs(dest)
    for n, data in files.items():
        with open(os.path.join(dest, n), 'wb') as f:
            f.write(data)
    with open(os.path.join(dest, 'cmd'), 'w') as f:
        f.write(cmd + '\n')
    with open(os.path.join(dest, 'expected'), 'wb') as f:
        f.write(out)
    if err:
        with open(os.path.join(dest, 'expected.err'), 'wb') as f:
            f.write(ours(err))
    if rc:
        with open(os.path.join(dest, 'status'), 'w') as f:
            f.write('%d\n' % rc)
    if note:
        with open(os.path.join(dest, 'note'), 'w') as f:
            f.write(note)
    return out, err, rc


def main():
    prefix, dump, outdir = sys.argv[1:4]
    keep = '--keep-existing' in sys.argv
    skip = dict(l.split(' ', 1) for l in os.environ.get('GEN_SKIP', '').split(';') if l)
    for t in json.load(open(dump)):
        name, opts, inputs, aux, spec = parse_case(t)
        full = prefix + name
        why = skip.get(name)
        if 'ENV' in spec and 'LC_ALL' in spec['ENV'] and spec['ENV'] != 'LC_ALL=C':
            why = why or 'a multibyte locale (%s)' % spec['ENV']
        if 'ENV' in spec and '_POSIX2_VERSION' in spec['ENV']:
            why = why or "obsolete +POS keys (read only under _POSIX2_VERSION=199209)"
        if not why and (REFUSED_FLAGS.search(opts) or KEY_REFUSED.search(opts)):
            why = 'needs an option gpumerge refuses (%s)' % opts
        if why:
            print('OUT  %s: %s' % (full, why))
            continue
        files = {n: b(v) for n, v in inputs}
        files.update({n: b(v) for n, v in aux.items()})
        base = (opts + ' ' + ' '.join(n for n, _ in inputs)).strip()
        if 'CMP' in spec:
            base += ' && cat ' + list(spec['CMP'][1].keys())[0]
        variants = [(full, base)]
        if prefix == 'sort-' and len(inputs) == 1 and inputs[0][0] == 'in' and not opts.endswith('<'):
            variants.append((full + '.r', (opts + ' < in').strip()))
        note = ''
        if not order_named(opts):
            eol = b'\0' if re.search(r'(^|\s)-[a-zA-Z]*z', opts) else b'\n'
            # the lines to order (not a --files0-from list read from standard input)
            sorted_files = [v for n, v in files.items()
                            if not ('--files0-from=-' in opts and '< ' + n in base)]
            lines = set(l for v in sorted_files for l in v.split(eol)[:v.count(eol)] +
                        ([v.rsplit(eol, 1)[-1]] if v and not v.endswith(eol) else []))
            o, e, rc = run_sort(base, files)
            if rc == 2 or len(lines) <= 1:
                pass  # order cannot matter (no two lines differ): as written
            else:
                o2, e2, rc2 = run_sort('-n ' + base, files)
                want = b(spec['OUT']) if 'OUT' in spec else o
                if 'CMP' in spec:
                    want = b(spec['CMP'][0])
                if (o2, rc2) != (want, spec.get('EXIT', 0)):
                    print('OUT  %s: names no order, and with -n added it gives %r, exit %d, '
                          'where the case checks %r, exit %d'
                          % (full, o2[:40], rc2, want[:40], spec.get('EXIT', 0)))
                    continue
                variants = [(n, '-n ' + c) for n, c in variants]
                note = ('coreutils runs this case as "sort %s": it names no order, so sort '
                        'compares bytes where gpumerge implies -n; -n is added here, which '
                        "leaves coreutils' expected output as it is.\n" % opts)
        for n, cmd in variants:
            dest = os.path.join(outdir, n)
            if os.path.exists(dest):
                if keep:
                    print('KEEP %s' % n)
                    continue
                shutil.rmtree(dest)
            script_out = b(spec['CMP'][0]) if 'CMP' in spec else b(spec.get('OUT', ''))
            out = run_sort(cmd, files)[0]
            case_note = note
            if ('OUT' in spec or 'CMP' in spec) and out != script_out:
                case_note += ("coreutils' script expects %r; coreutils 9.1, installed here, "
                              "writes these bytes (the script follows a later change) and "
                              "they are kept.\n" % script_out)
            err = run_sort(cmd, files)[1]
            if 'ERR' in spec and 'ERR_SUBST' not in spec and err and err != b(spec['ERR']):
                case_note += ("coreutils' script expects the message %r; coreutils 9.1 words it "
                              "as expected.err says (the script follows a later change).\n"
                              % b(spec['ERR']))
            out, err, rc = write_case(dest, cmd, files, case_note)
            flag = ''
            if ('OUT' in spec or 'CMP' in spec) and out != script_out:
                flag += ' [9.1 stdout differs from the script: %r vs %r]' % (out[:80], script_out[:80])
            if rc != spec.get('EXIT', 0):
                flag += ' [9.1 exit %d, script %d]' % (rc, spec.get('EXIT', 0))
            if 'ERR' in spec and 'ERR_SUBST' not in spec and n == full and err != b(spec['ERR']):
                flag += ' [9.1 stderr %r, script %r]' % (err, b(spec['ERR']))
            print('ADD  %s: %s%s%s' % (n, cmd, ' (-n added)' if note else '', flag))


main()
