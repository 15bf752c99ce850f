// bench/peers.mjs - the peers of bench/records.sh: DuckDB and Polars sorting a CSV
// file of `id,ts,payload` lines (no header) by ts, stably, into a CSV file, as
// `sort -t, -k2,2n -s` does. id and payload are read as text so that every line
// comes back with its own bytes; ts as a 64-bit integer.
//
// duckdb-bytes and polars-bytes are the peers of bench/text.sh instead: each line
// read as one text column (the lines hold no \x01, the readers' delimiter) and
// ordered by its bytes, as `LC_ALL=C sort` orders them.
//
// Usage: PEERS=DIR node bench/peers.mjs duckdb|polars|duckdb-bytes|polars-bytes IN OUT
// (DIR holds the node_modules that bench/records.sh installs)
import { createRequire } from 'node:module';
const [engine, input, output] = process.argv.slice(2);
const require = createRequire((process.env.PEERS || '.') + '/');

async function duckdb() {
    const { DuckDBInstance } = require('@duckdb/node-api');
    const db = await DuckDBInstance.create(':memory:');
    const con = await db.connect();
    const q = (s) => s.replace(/'/g, "''");
    await con.run(`COPY (SELECT id, ts, payload FROM (
        SELECT *, row_number() OVER () AS rn FROM read_csv('${q(input)}', header = false,
            delim = ',', quote = '', escape = '',
            columns = {'id': 'VARCHAR', 'ts': 'BIGINT', 'payload': 'VARCHAR'}))
        ORDER BY ts, rn) TO '${q(output)}' (HEADER false, DELIMITER ',', QUOTE '')`);
}

async function polars() {
    const pl = require('nodejs-polars');
    const df = pl.readCSV(input, { hasHeader: false, sep: ',', quoteChar: undefined,
        dtypes: { column_1: pl.Utf8, column_2: pl.Int64, column_3: pl.Utf8 } });
    df.sort({ by: 'column_2', maintainOrder: true }).writeCSV(output, { includeHeader: false });
}

async function duckdbBytes() {
    const { DuckDBInstance } = require('@duckdb/node-api');
    const db = await DuckDBInstance.create(':memory:');
    const con = await db.connect();
    const q = (s) => s.replace(/'/g, "''");
    await con.run(`COPY (SELECT line FROM read_csv('${q(input)}', header = false,
            delim = '\x01', quote = '', escape = '', columns = {'line': 'VARCHAR'})
        ORDER BY line COLLATE "binary") TO '${q(output)}' (HEADER false, DELIMITER '\x01', QUOTE '')`);
}

async function polarsBytes() {
    const pl = require('nodejs-polars');
    const df = pl.readCSV(input, { hasHeader: false, sep: '\x01', quoteChar: undefined,
        dtypes: { column_1: pl.Utf8 } });
    df.sort({ by: 'column_1' }).writeCSV(output, { includeHeader: false, separator: '\x01', quoteStyle: 'never' });
}

if (engine === 'duckdb') await duckdb();
else if (engine === 'polars') await polars();
else if (engine === 'duckdb-bytes') await duckdbBytes();
else if (engine === 'polars-bytes') await polarsBytes();
else { console.error('usage: peers.mjs duckdb|polars|duckdb-bytes|polars-bytes IN OUT'); process.exit(2); }
