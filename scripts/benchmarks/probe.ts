/**
 * What the cpu scenario reads of a server process: its own CPU time from /proc/<pid>/stat
 * (utime + stime, every thread of the process, in clock ticks), and the snapshots of the probe
 * preload (cpuProbe.cjs: SQL statements by text, bytes allocated on the V8 heap).
 */
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"

let ticks: number | undefined
/** Clock ticks a second (`getconf CLK_TCK`, 100 on Linux). */
export const clockTicks = (): number => (ticks ??= Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()))

/** The process's CPU time so far, user and system, all its threads, in ms. */
export const cpuMs = (pid: number): number => statCpuMs(`/proc/${pid}/stat`)

/**
 * The main thread's CPU time so far (/proc/<pid>/task/<pid>/stat), in ms: the rest of the
 * process's is V8's helper threads (parallel scavenges, concurrent marking), worker threads and
 * libuv's pool.
 */
export const mainThreadCpuMs = (pid: number): number => statCpuMs(`/proc/${pid}/task/${pid}/stat`)

const statCpuMs = (file: string): number => {
  const stat = readFileSync(file, "utf8")
  // the command name (field 2) is in parentheses and may hold spaces: count fields after it
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  // fields 14 and 15 of proc(5), utime and stime; the list here starts at field 3
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks()
}

export interface ProbeSnapshot {
  readonly seq: number
  readonly allocatedBytes: number
  /** executions by SQL text since the process started */
  readonly statements: Readonly<Record<string, number>>
}

const readSnapshot = (file: string): ProbeSnapshot | undefined =>
  existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) as ProbeSnapshot : undefined

/** Asks the probe of `pid` for a snapshot (SIGUSR2) and waits for it. */
export const probe = async (pid: number, file: string): Promise<ProbeSnapshot> => {
  const before = readSnapshot(file)?.seq ?? 0
  process.kill(pid, "SIGUSR2")
  const deadline = performance.now() + 10_000
  while (performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 5))
    const now = readSnapshot(file)
    if (now !== undefined && now.seq > before) return now
  }
  throw new Error(`the probe of process ${pid} did not answer within 10 s`)
}

/** What a process did between two readings: CPU ms, statements by text, bytes allocated. */
export interface Reading {
  readonly cpuMs: number
  readonly mainCpuMs: number
  readonly wallMs: number
  readonly snapshot: ProbeSnapshot
}

export const read = async (pid: number, file: string): Promise<Reading> => {
  // the probe's own work (a file written) happens before the CPU is read, so it counts in the
  // phase before, which it lengthens by a fraction of a millisecond
  const snapshot = await probe(pid, file)
  return { cpuMs: cpuMs(pid), mainCpuMs: mainThreadCpuMs(pid), wallMs: performance.now(), snapshot }
}

export interface Delta {
  readonly cpuMs: number
  readonly mainCpuMs: number
  readonly wallMs: number
  readonly allocatedBytes: number
  readonly statements: number
  /** executions by SQL text in the period, most first */
  readonly bySql: ReadonlyArray<{ readonly sql: string; readonly calls: number }>
}

export const delta = (from: Reading, to: Reading): Delta => {
  const bySql = Object.entries(to.snapshot.statements)
    .map(([sql, calls]) => ({ sql, calls: calls - (from.snapshot.statements[sql] ?? 0) }))
    .filter((s) => s.calls > 0)
    .sort((a, b) => b.calls - a.calls)
  return {
    cpuMs: to.cpuMs - from.cpuMs,
    mainCpuMs: to.mainCpuMs - from.mainCpuMs,
    wallMs: to.wallMs - from.wallMs,
    allocatedBytes: to.snapshot.allocatedBytes - from.snapshot.allocatedBytes,
    statements: bySql.reduce((sum, s) => sum + s.calls, 0),
    bySql
  }
}
