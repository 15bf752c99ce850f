#!/usr/bin/env python3
"""bench/arrow_cupy.py - the dataframe peer of `gpumerge sort -t, -k2,2n -s`: a CSV of
records "id,ts,payload" (build/bench/gen -c) read by pyarrow's CSV reader, its second
column sorted on the GPU by cupy's stable argsort, the rows taken in that order and
written back by pyarrow's CSV writer, no header and no quotes. For gen's records (an
integer second field, no quotes, no separators in the payload) the output's bytes equal
`LC_ALL=C sort -t, -k2,2n -s`'s; for other text they need not.

It prints the versions it ran with (pyarrow, cupy, numpy, CUDA) and the time of each
step (the process as a whole is the peer's time: `time bench/arrow_cupy.py IN OUT`);
--numpy sorts on the CPU with numpy's stable argsort instead.

Needs pyarrow 11 or later (quoting_style) and a cupy built for the machine's CUDA
(e.g. cupy-cuda13x), with numpy.

Usage: bench/arrow_cupy.py [--numpy] IN OUT
"""
import sys
import time


def main(argv):
    use_numpy = "--numpy" in argv
    args = [a for a in argv if a != "--numpy"]
    if len(args) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    src, dst = args

    import numpy
    import pyarrow
    import pyarrow.csv as csv

    versions = [f"pyarrow {pyarrow.__version__}", f"numpy {numpy.__version__}"]
    if not use_numpy:
        import cupy

        versions += [
            f"cupy {cupy.__version__}",
            f"CUDA runtime {cupy.cuda.runtime.runtimeGetVersion()}",
            f"driver {cupy.cuda.runtime.driverGetVersion()}",
        ]
        cupy.zeros(1).sum()  # CUDA's start-up, outside the timed steps
    print("versions:", ", ".join(versions))

    t0 = time.perf_counter()
    table = csv.read_csv(
        src,
        read_options=csv.ReadOptions(column_names=["id", "ts", "payload"]),
        parse_options=csv.ParseOptions(delimiter=",", quote_char=False),
        convert_options=csv.ConvertOptions(
            column_types={"id": pyarrow.string(), "ts": pyarrow.int64(),
                          "payload": pyarrow.string()}),
    )
    t1 = time.perf_counter()
    ts = table.column("ts").to_numpy()
    if use_numpy:
        order = numpy.argsort(ts, kind="stable")
    else:
        order = cupy.argsort(cupy.asarray(ts)).get()  # cupy's argsort is stable
    table = table.take(pyarrow.array(order))
    t2 = time.perf_counter()
    csv.write_csv(table, dst,
                  write_options=csv.WriteOptions(include_header=False, quoting_style="none"))
    t3 = time.perf_counter()
    print(f"read {t1 - t0:.3f} s, argsort and take {t2 - t1:.3f} s, write {t3 - t2:.3f} s, "
          f"the steps {t3 - t0:.3f} s ({table.num_rows} rows, {'numpy' if use_numpy else 'cupy'})")


if __name__ == "__main__":
    main(sys.argv[1:])
