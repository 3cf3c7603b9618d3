/**
 * A preload for `gligabao serve` that turns SQLite's secure_delete back off, to measure what it
 * costs (BENCHMARKS.md, "No trace"); the server itself has no setting for it (docs/SECURITY.md):
 *
 *   GLIGABAO_BENCH_NODE_OPTIONS="--require $PWD/scripts/benchmarks/secureDeleteOff.cjs" \
 *     scripts/bench --quick --only overhead,throughput
 *
 * Every statement that turns it on is prepared as one that turns it off; the first one says so
 * on stderr, so a run that did not load it is told apart.
 */
"use strict"
const Database = require("better-sqlite3")

const ON = /^\s*PRAGMA\s+secure_delete\s*=\s*ON\s*$/i
const prepare = Database.prototype.prepare
const pragma = Database.prototype.pragma
let told = false
const tell = () => {
  if (told) return
  told = true
  process.stderr.write("secureDeleteOff.cjs: secure_delete is OFF in this process\n")
}

Database.prototype.prepare = function(source, ...rest) {
  if (typeof source === "string" && ON.test(source)) {
    tell()
    return prepare.call(this, "PRAGMA secure_delete = OFF", ...rest)
  }
  return prepare.call(this, source, ...rest)
}
// the vector reader's worker sets it through pragma()
Database.prototype.pragma = function(source, ...rest) {
  if (typeof source === "string" && /^\s*secure_delete\s*=\s*ON\s*$/i.test(source)) {
    return pragma.call(this, "secure_delete = OFF", ...rest)
  }
  return pragma.call(this, source, ...rest)
}
