/**
 * The cpu scenario on PostgreSQL (`scripts/bench --pg`, issue 39 item 4): a throwaway cluster
 * (test/support/postgres.ts, as `scripts/load --pg auto` starts one) with a database per side,
 * and the CPU time of the cluster's processes read from /proc, so that the work that moved from
 * the server process into PostgreSQL's backends is counted too.
 *
 * Each backend's title names its database (`postgres: postgres cpu_plain 127.0.0.1(40312) idle`),
 * so a backend's CPU goes to its side; the postmaster, checkpointer, WAL writer and the other
 * background processes are the cluster's own. A backend that exits takes its CPU time with it,
 * so the processes are sampled every 200 ms and an exited one keeps its last reading.
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { startPgCluster } from "../../test/support/postgres.js"
import { clockTicks } from "./probe.js"

/** The little of node-postgres used here (it ships no types). */
interface PgClient {
  connect(): Promise<void>
  query<R = any>(text: string, values?: ReadonlyArray<unknown>): Promise<{ rows: Array<R> }>
  end(): Promise<void>
}
const pg = createRequire(import.meta.url)("pg") as { Client: new(options: object) => PgClient }

/** Runs `f` on a connection to `url`, closed afterwards. */
export const withPg = async <A>(url: string, f: (client: PgClient) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/** CPU ms by database name ("" for the cluster's background processes), at one moment. */
export type ClusterReading = ReadonlyMap<number, { readonly database: string; readonly cpuMs: number }>

export interface CpuCluster {
  /** the URL of a database of the cluster, created by `start` */
  readonly url: (database: string) => string
  readonly postmasterPid: number
  readonly read: () => ClusterReading
  readonly stop: () => void
}

const statFields = (pid: number): Array<string> | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  } catch {
    return undefined
  }
}

/** utime + stime of the process (all its threads), ms; fields 14 and 15 of proc(5). */
const cpuOf = (fields: ReadonlyArray<string>) => ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks()

/** Starts the cluster and creates the databases. */
export const startCpuCluster = async (databases: ReadonlyArray<string>): Promise<CpuCluster> => {
  const cluster = await startPgCluster()
  try {
    // a backend's parent is the postmaster (field 4 of its stat), read while the backend lives
    const postmasterPid = await withPg(cluster.adminUrl, async (client) => {
      for (const name of databases) await client.query(`CREATE DATABASE ${name}`)
      const backend = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid
      return Number(statFields(backend)?.[1])
    })
    if (!Number.isInteger(postmasterPid) || postmasterPid <= 1) throw new Error("no postmaster found in /proc")
    const seen = new Map<number, { database: string; cpuMs: number }>()
    const databaseOf = (pid: number): string => {
      try {
        const title = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").split(" ")
        return databases.find((d) => title.includes(d)) ?? ""
      } catch {
        return ""
      }
    }
    const sample = () => {
      let children: Array<number> = []
      try {
        children = readFileSync(`/proc/${postmasterPid}/task/${postmasterPid}/children`, "utf8")
          .trim().split(" ").filter((p) => p !== "").map(Number)
      } catch {
        // the cluster is gone: the last readings stay
      }
      for (const pid of [postmasterPid, ...children]) {
        const fields = statFields(pid)
        if (fields === undefined) continue
        const known = seen.get(pid)
        // a backend's title names its database once it has connected
        const database = known?.database || (pid === postmasterPid ? "" : databaseOf(pid))
        seen.set(pid, { database, cpuMs: cpuOf(fields) })
      }
    }
    sample()
    const timer = setInterval(sample, 200)
    timer.unref()
    return {
      url: (database) => cluster.adminUrl.replace(/\/postgres$/, `/${database}`),
      postmasterPid,
      read: () => (sample(), new Map(seen)),
      stop: () => {
        clearInterval(timer)
        cluster.stop()
      }
    }
  } catch (error) {
    cluster.stop()
    throw error
  }
}

/** CPU ms of the cluster's processes between two readings: by database, and in all. */
export const clusterDelta = (from: ClusterReading, to: ClusterReading) => {
  const byDatabase: Record<string, number> = {}
  let total = 0
  for (const [pid, now] of to) {
    const ms = now.cpuMs - (from.get(pid)?.cpuMs ?? 0)
    byDatabase[now.database] = (byDatabase[now.database] ?? 0) + ms
    total += ms
  }
  return { byDatabase, total }
}
