/**
 * A preload for `gligabao serve` (`node --require`, set by `scripts/bench --trace-sql`): counts
 * and times every better-sqlite3 statement and script (`exec`) by its SQL text, and writes the totals as JSON to
 * $GLIGABAO_BENCH_SQL_TRACE when the process exits. Nothing in the server changes.
 */
"use strict"
const { writeFileSync } = require("node:fs")
const Database = require("better-sqlite3")

const out = process.env.GLIGABAO_BENCH_SQL_TRACE
const totals = new Map()
let patched = false

const wrap = (proto, method, keyOf = (self) => self.source) => {
  const original = proto[method]
  proto[method] = function(...args) {
    const t0 = process.hrtime.bigint()
    try {
      return original.apply(this, args)
    } finally {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6
      const key = keyOf(this, args)
      const entry = totals.get(key) ?? { calls: 0, ms: 0 }
      entry.calls += 1
      entry.ms += ms
      totals.set(key, entry)
    }
  }
}

// a script (several statements in one call) is timed whole, under its text
wrap(Database.prototype, "exec", (_, args) => String(args[0]))

const prepare = Database.prototype.prepare
Database.prototype.prepare = function(...args) {
  const statement = prepare.apply(this, args)
  if (!patched) {
    patched = true
    const proto = Object.getPrototypeOf(statement)
    for (const method of ["run", "get", "all", "iterate"]) wrap(proto, method)
  }
  return statement
}

process.on("exit", () => {
  if (out === undefined) return
  const statements = [...totals].map(([sql, t]) => ({ sql, calls: t.calls, ms: Math.round(t.ms * 100) / 100 }))
  statements.sort((a, b) => b.ms - a.ms)
  writeFileSync(out, JSON.stringify({ statements }, null, 2))
})
