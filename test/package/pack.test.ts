/**
 * gligabao as an installed library: `npm pack`, then a fresh project that has only the peer
 * dependencies installs the tarball, type-checks every example of examples/ under `strict` and
 * `exactOptionalPropertyTypes`, and runs the embedding example and the mounted HTTP example
 * against the fake model servers. This is what a new user does, so it needs the npm registry
 * (or npm's cache) and builds better-sqlite3's native module once: several minutes.
 */
import { execFile, spawn } from "node:child_process"
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeAnthropic, type RecordedRequest, startFakeAnthropic } from "../support/fakeAnthropic.js"

const run = promisify(execFile)
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"))
const EXAMPLES = join(ROOT, "examples")
const MINUTES = 60_000

const EXTRACT_MARK = "You extract a knowledge graph"

/** Alice lives in Paris, for any text; every other stage gets an empty answer of its shape. */
const answer = (request: RecordedRequest): string => {
  const system = JSON.stringify(request.body.system)
  if (system.includes(EXTRACT_MARK)) {
    return JSON.stringify({
      entities: [
        { name: "Alice Smith", type: "person", description: "an engineer" },
        { name: "Paris", type: "place", description: "a city" }
      ],
      edges: [{
        source: "Alice Smith",
        target: "Paris",
        relation: "lives in",
        description: "Alice Smith lives in Paris",
        valid_at: "2025-01-15T00:00:00Z",
        invalid_at: null
      }]
    })
  }
  return JSON.stringify({ resolutions: [] })
}

/** The files a packed tarball lists (`npm pack --dry-run --json`). */
const packedFiles = async (): Promise<ReadonlyArray<string>> => {
  const { stdout } = await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024
  })
  return (JSON.parse(stdout)[0].files as Array<{ path: string }>).map((f) => f.path)
}

const runExample = (
  project: string,
  file: string,
  env: Record<string, string>
): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(join(project, "node_modules", ".bin", "tsx"), [file], {
      cwd: project,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${file} did not finish: ${stdout}\n${stderr}`))
    }, 2 * MINUTES)
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

/** Starts a long-running example and resolves once it says where it listens. */
const startExample = (project: string, file: string, env: Record<string, string>) =>
  new Promise<{ url: string; stop: () => void }>((resolve, reject) => {
    const child = spawn(join(project, "node_modules", ".bin", "tsx"), [file], {
      cwd: project,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${file} did not start: ${output}`))
    }, 2 * MINUTES)
    const onData = (d: Buffer) => {
      output += d
      const listening = /Listening on (http:\/\/[\d.:]+)/.exec(output)
      if (listening !== null) {
        clearTimeout(timer)
        resolve({ url: listening[1]!, stop: () => child.kill("SIGTERM") })
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.on("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`${file} exited with ${code}: ${output}`))
    })
  })

describe("the packed library", () => {
  const project = join(tmpdir(), `gligabao-pack-${process.pid}-${Date.now()}`)
  let anthropic: FakeAnthropic

  beforeAll(async () => {
    mkdirSync(project, { recursive: true })
    anthropic = await startFakeAnthropic({ text: answer })
  }, MINUTES)

  afterAll(async () => {
    await anthropic?.close()
    if (process.env.GLIGABAO_KEEP_PACK_PROJECT === undefined) rmSync(project, { recursive: true, force: true })
  })

  it("lists no test, benchmark or script file", async () => {
    const files = await packedFiles()
    expect(files.length).toBeGreaterThan(50)
    const leaked = files.filter((f) =>
      /^(test|scripts|evals|examples)\//.test(f) || /bench/i.test(f) || /\.test\.|\.ts$/.test(f) && !f.endsWith(".d.ts")
    )
    expect(leaked).toEqual([])
    expect(files).toContain("build/dist/layers/entry.js")
    expect(files).toContain("build/dist/layers/entry.d.ts")
    expect(files).toContain("src/admin/ui/index.html")
  }, 2 * MINUTES)

  it("installs into a fresh project, type-checks every example and runs them", async () => {
    const { stdout: packed } = await run("npm", ["pack", "--json", "--pack-destination", project], {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024
    })
    const tarball = JSON.parse(packed.slice(packed.indexOf("[")))[0].filename as string
    const peers: Record<string, string> = pkg.peerDependencies
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify(
        {
          name: "gligabao-embedder",
          private: true,
          type: "module",
          dependencies: {
            gligabao: `file:./${tarball}`,
            // exactly the peers, at the versions the project is developed with
            ...Object.fromEntries(Object.keys(peers).map((name) => [name, pkg.devDependencies[name]])),
            tsx: pkg.devDependencies.tsx,
            typescript: pkg.devDependencies.typescript,
            "@types/node": pkg.devDependencies["@types/node"]
          },
          allowScripts: { "better-sqlite3": true }
        },
        null,
        2
      )
    )
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          types: ["node"],
          strict: true,
          exactOptionalPropertyTypes: true,
          noEmit: true
        },
        include: ["examples"]
      })
    )
    mkdirSync(join(project, "examples"))
    for (const file of readdirSync(EXAMPLES).filter((f) => f.endsWith(".ts"))) {
      copyFileSync(join(EXAMPLES, file), join(project, "examples", file))
    }

    await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], {
      cwd: project,
      maxBuffer: 64 * 1024 * 1024,
      timeout: 10 * MINUTES
    })
    // one copy of effect in the app: gligabao's tags and the app's are the same
    const { stdout: effects } = await run("npm", ["ls", "effect", "--all", "--parseable"], { cwd: project })
    expect(new Set(effects.trim().split("\n").filter((line) => line.endsWith("/effect"))).size).toBe(1)

    const checked = await run(join(project, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.json"], { cwd: project })
      .then(() => "")
      .catch((e: { stdout?: string }) => e.stdout ?? String(e))
    expect(checked).toBe("")

    const env = {
      ANTHROPIC_API_KEY: "sk-ant-example",
      ANTHROPIC_BASE_URL: anthropic.url,
      GLIGABAO_EXAMPLE_DB: join(project, "example.db")
    }
    const remembered = await runExample(project, "examples/remember-and-search.ts", env)
    expect(remembered.code, remembered.stderr).toBe(0)
    expect(remembered.stdout).toContain("Alice Smith lives in Paris")

    const served = await startExample(project, "examples/serve-in-your-app.ts", {
      ...env,
      GLIGABAO_EXAMPLE_DB: join(project, "served.db"),
      PORT: "0"
    })
    try {
      expect(await (await fetch(`${served.url}/hello`)).text()).toBe("hello")
      expect(await (await fetch(`${served.url}/healthz`)).json()).toEqual({ status: "ok" })
      const bad = await fetch(`${served.url}/v1/gb/search`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ user_id: "a" })
      })
      expect([bad.status, await bad.json()]).toEqual([400, { error: "query is required" }])
      const stored = await fetch(`${served.url}/v1/gb/remember`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ user_id: "alice", text: "Alice Smith lives in Paris." })
      })
      expect(stored.status).toBe(200)
      const body = (await stored.json()) as { edges: Array<{ description: string }> }
      expect(body.edges.map((e) => e.description)).toEqual([
        "Alice Smith lives in Paris"
      ])
    } finally {
      served.stop()
    }
  }, 15 * MINUTES)
})
