#!/usr/bin/env python3
"""bench/arrow_cupy.py - the dataframe peer of `gpumerge sort -t, -k2,2n -s`: a CSV of
records "id,ts,payload" (build/bench/gen -c) read by pyarrow's CSV reader, its second
column sorted on the GPU by cupy's stable argsort, the rows taken in that order and
written back by pyarrow's CSV writer, no header and no quotes. For gen's records (an
integer second field, no quotes, no separators in the payload) the output's bytes equal
`LC_ALL=C sort -t, -k2,2n -s`'s; for other text they need not.

With --lines it is the peer of `sort` in byte order instead: each line read as one
large_string column and ordered by pyarrow.compute.sort_indices (on the CPU: neither
library sorts strings on the GPU), which orders strings by their bytes as `LC_ALL=C
sort` does (the lines hold no \x01, which serves as the reader's delimiter).
The text columns are large_string: string's 32-bit offsets overflow beyond 2 GiB a
column, which 100 M such lines pass.

It prints the versions it ran with (pyarrow, cupy, numpy, CUDA) and the time of each
step (the process as a whole is the peer's time: `time bench/arrow_cupy.py IN OUT`);
--numpy sorts on the CPU with numpy's stable argsort instead.

Needs pyarrow 11 or later (quoting_style) and a cupy built for the machine's CUDA
(e.g. cupy-cuda13x), with numpy.

Usage: bench/arrow_cupy.py [--numpy | --lines] IN OUT
"""
import sys
import time


def main(argv):
    use_numpy = "--numpy" in argv
    lines = "--lines" in argv
    use_numpy |= lines
    args = [a for a in argv if a not in ("--numpy", "--lines")]
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

    if lines:
        return by_bytes(src, dst, pyarrow, csv)
    t0 = time.perf_counter()
    table = csv.read_csv(
        src,
        read_options=csv.ReadOptions(column_names=["id", "ts", "payload"]),
        parse_options=csv.ParseOptions(delimiter=",", quote_char=False),
        convert_options=csv.ConvertOptions(
            column_types={"id": pyarrow.large_string(), "ts": pyarrow.int64(),
                          "payload": pyarrow.large_string()}),
    )
    t1 = time.perf_counter()
    ts = table.column("ts").to_numpy()
    if use_numpy:
        order = numpy.argsort(ts, kind="stable")
    else:
        order = cupy.argsort(cupy.asarray(ts)).get()  # cupy's argsort is stable
    table = table.take(pyarrow.array(order))
    write(csv, table, dst, t0, t1, "argsort and take", "numpy" if use_numpy else "cupy")


def write(csv, table, dst, t0, t1, step, engine):
    """Writes the sorted table as CSV and prints each step's time since t0 (the read
    ending at t1, the sort now)."""
    t2 = time.perf_counter()
    csv.write_csv(table, dst,
                  write_options=csv.WriteOptions(include_header=False, quoting_style="none"))
    t3 = time.perf_counter()
    print(f"read {t1 - t0:.3f} s, {step} {t2 - t1:.3f} s, write {t3 - t2:.3f} s, "
          f"the steps {t3 - t0:.3f} s ({table.num_rows} rows, {engine})")


def by_bytes(src, dst, pyarrow, csv):
    import pyarrow.compute as pc

    t0 = time.perf_counter()
    table = csv.read_csv(
        src,
        read_options=csv.ReadOptions(column_names=["line"]),
        parse_options=csv.ParseOptions(delimiter="\x01", quote_char=False,
                                       ignore_empty_lines=False),
        convert_options=csv.ConvertOptions(column_types={"line": pyarrow.large_string()},
                                           strings_can_be_null=False),
    )
    t1 = time.perf_counter()
    table = table.take(pc.sort_indices(table, sort_keys=[("line", "ascending")]))
    # Written as the bytes of the lines each followed by a newline: the CSV writer
    # refuses unquoted values that hold its delimiter (any comma in a line).
    t2 = time.perf_counter()
    column = table.column("line").combine_chunks()
    text = pyarrow.large_string()
    ended = pc.binary_join_element_wise(column, pyarrow.scalar("", text),
                                        pyarrow.scalar("\n", text))
    _, offsets, data = ended.buffers()
    first, last = (int(x) for x in
                   pyarrow.Array.from_buffers(pyarrow.int64(), len(ended) + 1,
                                              [None, offsets], offset=ended.offset)
                   .to_numpy()[[0, -1]])
    with open(dst, "wb") as out:
        out.write(memoryview(data)[first:last])
    t3 = time.perf_counter()
    print(f"read {t1 - t0:.3f} s, sort_indices and take {t2 - t1:.3f} s, write {t3 - t2:.3f} s, "
          f"the steps {t3 - t0:.3f} s ({table.num_rows} rows, pyarrow)")


if __name__ == "__main__":
    main(sys.argv[1:])
