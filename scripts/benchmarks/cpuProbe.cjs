/**
 * A preload for the cpu scenario's servers (`node --require`, with $GLIGABAO_BENCH_PROBE naming a
 * JSON file), the same for gligabao and the plain implementation. On SIGUSR2 it writes, at once
 * and atomically (a temporary file renamed), what the process has done since it started:
 *
 * - `statements`: better-sqlite3 statements executed (run, get, all, iterate and Database#exec),
 *   counted by SQL text; only counted, not timed, so that the CPU measured beside it stays the
 *   server's own (a Map lookup per statement). With $GLIGABAO_BENCH_PROBE_PG set (the cpu
 *   scenario on PostgreSQL), node-postgres' Client#query calls too: each is one statement sent
 *   to the server (a pool's query, a cursor, BEGIN and COMMIT included), counted by its text;
 * - `allocatedBytes`: bytes allocated on the main thread's V8 heap, from v8.GCProfiler: what each
 *   collection freed (used heap before it minus after it) plus the growth of the used heap since
 *   the start. Worker threads (gligabao's vector reader) have heaps of their own, not counted.
 *
 * `seq` counts the snapshots, so the bench knows when its signal was answered. The main thread
 * only: a worker thread gets no signals. Nothing in the server changes.
 */
"use strict"
const { isMainThread } = require("node:worker_threads")

const out = process.env.GLIGABAO_BENCH_PROBE
if (isMainThread && out !== undefined) {
  const { renameSync, writeFileSync } = require("node:fs")
  const v8 = require("node:v8")
  const Database = require("better-sqlite3")

  const counts = new Map()
  const count = (sql) => counts.set(sql, (counts.get(sql) ?? 0) + 1)
  let patched = false
  const wrap = (proto, method) => {
    const original = proto[method]
    proto[method] = function(...args) {
      count(this.source)
      return original.apply(this, args)
    }
  }
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
  const exec = Database.prototype.exec
  Database.prototype.exec = function(sql) {
    count(sql)
    return exec.call(this, sql)
  }
  if (process.env.GLIGABAO_BENCH_PROBE_PG !== undefined) {
    // the copy every importer gets (pg's ES module entry re-exports this CommonJS one)
    const { Client } = require("pg")
    const query = Client.prototype.query
    Client.prototype.query = function(config, ...rest) {
      const text = typeof config === "string" ? config : config?.text
      if (typeof text === "string") count(text)
      return query.call(this, config, ...rest)
    }
  }

  const usedAtStart = v8.getHeapStatistics().used_heap_size
  let freed = 0
  let profiler = new v8.GCProfiler()
  profiler.start()
  let seq = 0
  process.on("SIGUSR2", () => {
    // a profile is read when it stops: stop, add up what its collections freed, start another
    for (const gc of profiler.stop()?.statistics ?? []) {
      freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize
    }
    profiler = new v8.GCProfiler()
    profiler.start()
    seq += 1
    const used = v8.getHeapStatistics().used_heap_size
    const snapshot = {
      seq,
      allocatedBytes: freed + used - usedAtStart,
      statements: Object.fromEntries(counts)
    }
    writeFileSync(`${out}.tmp`, JSON.stringify(snapshot))
    renameSync(`${out}.tmp`, out)
  })
}
