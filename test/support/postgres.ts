/**
 * A throwaway PostgreSQL cluster for tests: initdb + pg_ctl on a free 127.0.0.1 port, in a temp
 * directory, removed afterwards. PostgreSQL refuses to run as root, and tests run as root here
 * and in CI, so the cluster then runs as the unprivileged `postgres` user.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"

export interface PgCluster {
  /** superuser URL of the `postgres` database */
  readonly adminUrl: string
  readonly stop: () => void
}

const INSTALL_HINT = "install PostgreSQL (Debian: `apt-get install postgresql`) so that initdb and pg_ctl are on PATH"

/** initdb's and pg_ctl's directory: PATH first, then Debian's versioned install directory. */
export const findPgBinDir = (): string | undefined => {
  const candidates = (process.env.PATH ?? "").split(delimiter).filter((dir) => dir !== "")
  const debian = "/usr/lib/postgresql"
  if (existsSync(debian)) {
    const versions = readdirSync(debian).sort((a, b) => Number(b) - Number(a))
    candidates.push(...versions.map((v) => join(debian, v, "bin")))
  }
  return candidates.find((dir) => existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl")))
}

/** The reason PostgreSQL tests cannot run here, or undefined when they can. */
export const pgUnavailableReason = (): string | undefined =>
  findPgBinDir() === undefined ? `PostgreSQL binaries (initdb, pg_ctl) not found: ${INSTALL_HINT}` : undefined

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0

/** runs a PostgreSQL tool, as `postgres` when we are root */
const runPgTool = (binDir: string, tool: string, args: ReadonlyArray<string>) => {
  const command = join(binDir, tool)
  const [file, argv] = isRoot() ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, [...args]]
  const result = spawnSync(file, argv, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
  if (result.status !== 0) {
    throw new Error(
      `${tool} failed (${result.status ?? result.signal}): ${result.stderr || result.stdout || result.error}`
    )
  }
}

const ownByPostgres = (path: string) => {
  if (!isRoot()) return
  const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim())
  const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim())
  chownSync(path, uid, gid)
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

/**
 * A detached shell that stops the cluster and removes its directory once this process is gone,
 * however it ended (a killed test run never reaches its teardown). Stopped with the cluster.
 */
const startWatchdog = (binDir: string, dataDir: string, root: string) => {
  const pgCtl = [join(binDir, "pg_ctl"), "-D", dataDir, "-m", "immediate", "-w", "stop"].map(shellQuote).join(" ")
  const stop = isRoot() ? `runuser -u postgres -- ${pgCtl}` : pgCtl
  // alive = /proc/<pid>/stat exists and its state (after the last ") ") is not Z: an unreaped
  // zombie still answers kill -0
  const alive =
    `st=$(sed -n 's/.*) \\(.\\).*/\\1/p' /proc/${process.pid}/stat 2>/dev/null) && [ -n "$st" ] && [ "$st" != Z ]`
  const script = `while ${alive}; do sleep 1; done; ${stop} >/dev/null 2>&1; rm -rf ${shellQuote(root)}`
  const child = spawn("sh", ["-c", script], { detached: true, stdio: "ignore" })
  child.unref()
  return child
}

export const startPgCluster = async (): Promise<PgCluster> => {
  const binDir = findPgBinDir()
  if (binDir === undefined) throw new Error(pgUnavailableReason())
  const root = mkdtempSync(join(tmpdir(), "gligabao-pg-"))
  ownByPostgres(root)
  const dataDir = join(root, "data")
  const logFile = join(root, "postgres.log")
  writeFileSync(logFile, "")
  ownByPostgres(logFile)
  const remove = () => rmSync(root, { recursive: true, force: true })
  try {
    runPgTool(binDir, "initdb", [
      "-D",
      dataDir,
      "-A",
      "trust",
      "-U",
      "postgres",
      "-E",
      "UTF8",
      "--locale=C",
      "--no-sync",
      "--no-instructions"
    ])
    const port = await freePort()
    const options = [
      `-p ${port}`,
      "-c listen_addresses=127.0.0.1",
      `-c unix_socket_directories=${root}`,
      "-c max_connections=300",
      // durability is pointless for a throwaway cluster and costs test time
      "-c fsync=off",
      "-c synchronous_commit=off",
      "-c full_page_writes=off"
    ].join(" ")
    runPgTool(binDir, "pg_ctl", ["-D", dataDir, "-l", logFile, "-o", options, "-w", "-t", "60", "start"])
    const watchdog = startWatchdog(binDir, dataDir, root)
    let stopped = false
    return {
      adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
      stop: () => {
        if (stopped) return
        stopped = true
        if (watchdog.pid !== undefined) {
          try {
            process.kill(watchdog.pid)
          } catch {
            // already gone
          }
        }
        try {
          runPgTool(binDir, "pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"])
        } finally {
          remove()
        }
      }
    }
  } catch (error) {
    // a start that timed out may still have left a server running
    spawnSync(isRoot() ? "runuser" : join(binDir, "pg_ctl"), [
      ...(isRoot() ? ["-u", "postgres", "--", join(binDir, "pg_ctl")] : []),
      "-D",
      dataDir,
      "-m",
      "immediate",
      "-w",
      "stop"
    ], { stdio: "ignore" })
    remove()
    throw error
  }
}
