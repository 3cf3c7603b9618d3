/**
 * gligabao as an installed library, installed as docs/EMBEDDING.md says: `npm pack` (its
 * package.json without `prepare`), then the Install section's commands exactly as written, with
 * the tarball for `gligabao` and nothing else pinned, so a new `latest` that breaks them fails
 * here. One fresh project gets the Effect install: it type-checks every Effect example under
 * `strict` and `exactOptionalPropertyTypes` and runs them against the fake model server. Another
 * gets the `--omit=peer` install, has no `effect`, and runs the plain client's and the Vercel AI
 * SDK's examples against the first project's `gligabao serve`. This is what a new user does, so it
 * needs the npm registry and builds better-sqlite3's native module once: several minutes.
 */
import { execFile, spawn } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeAnthropic, type RecordedRequest, startFakeAnthropic } from "../support/fakeAnthropic.js"
import { installCommands, words } from "./installCommands.js"

const run = promisify(execFile)
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"))
const EXAMPLES = join(ROOT, "examples")
const MINUTES = 60_000
/** the examples that need no Effect: run in the project installed with --omit=peer */
const WITHOUT_EFFECT = ["plain-client.ts", "ai-vercel-tools.ts"]
/** the examples that need `ai`, which the Effect install does not bring */
const NEEDS_AI = ["ai-vercel-tools.ts"]

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
  env: Record<string, string>,
  runtime: readonly [string, ...Array<string>] = [join(project, "node_modules", ".bin", "tsx")]
): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(runtime[0], [...runtime.slice(1), file], {
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

/** Starts a long-running process and resolves once it prints where it listens (`listening`'s group 1). */
const startListening = (
  command: string,
  args: ReadonlyArray<string>,
  cwd: string,
  env: Record<string, string>,
  listening: RegExp
) =>
  new Promise<{ url: string; stop: () => void }>((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${args.join(" ")} did not start: ${output}`))
    }, 2 * MINUTES)
    const onData = (d: Buffer) => {
      output += d
      const found = listening.exec(output)
      if (found !== null) {
        clearTimeout(timer)
        resolve({ url: found[1]!, stop: () => child.kill("SIGTERM") })
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.on("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`${args.join(" ")} exited with ${code}: ${output}`))
    })
  })

/** Starts a long-running example and resolves once it says where it listens. */
const startExample = (project: string, file: string, env: Record<string, string>) =>
  startListening(join(project, "node_modules", ".bin", "tsx"), [file], project, env, /Listening on (http:\/\/[\d.:]+)/)

/** npm as a user runs it (no audit or funding chatter; the command itself as written). */
const npm = (cwd: string, args: ReadonlyArray<string>) =>
  run("npm", [...args], {
    cwd,
    env: { ...process.env, npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" },
    maxBuffer: 64 * 1024 * 1024,
    timeout: 10 * MINUTES
  })

/** A documented command with the tarball for `gligabao`; the words after `npm`. */
const withTarball = (command: string, tarball: string): ReadonlyArray<string> =>
  words(command).slice(1).map((word) => (word === "gligabao" ? tarball : word))

const freshProject = (dir: string, tsconfig: Record<string, unknown>, examples: ReadonlyArray<string>) => {
  mkdirSync(join(dir, "examples"), { recursive: true })
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "gligabao-user", private: true, type: "module" }, null, 2)
  )
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        types: ["node"],
        strict: true,
        noEmit: true,
        ...tsconfig
      },
      include: ["examples"]
    })
  )
  for (const file of examples) copyFileSync(join(EXAMPLES, file), join(dir, "examples", file))
}

/** The type checker's complaints about a project's examples ("" when there are none). */
const typeCheck = (dir: string) =>
  run(join(dir, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.json"], { cwd: dir })
    .then(() => "")
    .catch((e: { stdout?: string }) => e.stdout ?? String(e))

/** The test tooling, at the versions the project is developed with (not part of what is documented). */
/** Bun and Deno as their npm packages publish them for this machine (Linux x64 only). */
const RUNTIMES = { bun: "@oven/bun-linux-x64@1.4.4", deno: "@deno/linux-x64-glibc@2.9.6" }

/** Bun's and Deno's commands to run a TypeScript file, installed under `base`. */
const otherRuntimes = async (base: string): Promise<ReadonlyArray<readonly [string, ...Array<string>]>> => {
  if (process.platform !== "linux" || process.arch !== "x64") {
    console.warn(
      `SKIPPED: the plain client on Bun and Deno (their packages here are for Linux x64, not ${process.arch})`
    )
    return []
  }
  const tools = join(base, "runtimes")
  mkdirSync(tools, { recursive: true })
  await npm(tools, ["install", "--no-save", "--prefix", tools, RUNTIMES.bun, RUNTIMES.deno])
  const modules = join(tools, "node_modules")
  return [
    [join(modules, "@oven", "bun-linux-x64", "bin", "bun")],
    [join(modules, "@deno", "linux-x64-glibc", "deno"), "run", "--allow-net", "--allow-env", "--allow-read"]
  ]
}

const TOOLING = ["tsx", "typescript", "@types/node"].map((name) => `${name}@${pkg.devDependencies[name]}`)

describe("the packed library", () => {
  const base = join(tmpdir(), `gligabao-pack-${process.pid}-${Date.now()}`)
  const withEffect = join(base, "with-effect")
  const withoutEffect = join(base, "without-effect")
  const examples = readdirSync(EXAMPLES).filter((f) => f.endsWith(".ts"))
  let anthropic: FakeAnthropic
  let tarball: string
  let manifestBefore: string

  beforeAll(async () => {
    mkdirSync(base, { recursive: true })
    anthropic = await startFakeAnthropic({ text: answer })
    manifestBefore = readFileSync(join(ROOT, "package.json"), "utf8")
    const { stdout: packed } = await run("npm", ["pack", "--json", "--pack-destination", base], {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
      timeout: 5 * MINUTES
    })
    tarball = join(base, JSON.parse(packed.slice(packed.indexOf("[")))[0].filename as string)
  }, 6 * MINUTES)

  afterAll(async () => {
    await anthropic?.close()
    if (process.env.GLIGABAO_KEEP_PACK_PROJECT === undefined) rmSync(base, { recursive: true, force: true })
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
    expect(files).toContain("build/dist/src/ai/index.js")
    expect(files).toContain("build/dist/src/ai/vercel.js")
    expect(files).toContain("src/admin/ui/index.html")
  }, 2 * MINUTES)

  it("carries no prepare script, and the repository's package.json is as it was", async () => {
    const { stdout } = await run("tar", ["-xOzf", tarball, "package/package.json"])
    const packed = JSON.parse(stdout)
    expect(packed.scripts.prepare).toBeUndefined()
    expect(packed.scripts.build).toBe(pkg.scripts.build)
    expect(packed.exports["./ai"]).toEqual(pkg.exports["./ai"])
    expect(readFileSync(join(ROOT, "package.json"), "utf8")).toBe(manifestBefore)
    expect(JSON.parse(manifestBefore).scripts.prepare).toBe("scripts/prepare")
  })

  it("installs with Effect as documented, type-checks every Effect example and runs them", async () => {
    freshProject(withEffect, { exactOptionalPropertyTypes: true }, examples.filter((f) => !NEEDS_AI.includes(f)))
    const commands = installCommands().filter((c) => !c.includes("--omit=peer"))
    expect(commands.length).toBeGreaterThanOrEqual(3)
    for (const command of commands) await npm(withEffect, withTarball(command, tarball))
    await npm(withEffect, ["install", "--save-dev", ...TOOLING])

    // one copy of effect in the app: gligabao's tags and the app's are the same
    const { stdout: effects } = await run("npm", ["ls", "effect", "--all", "--parseable"], { cwd: withEffect })
    expect(new Set(effects.trim().split("\n").filter((line) => line.endsWith("/effect"))).size).toBe(1)
    expect(await typeCheck(withEffect)).toBe("")

    const env = {
      ANTHROPIC_API_KEY: "sk-ant-example",
      ANTHROPIC_BASE_URL: anthropic.url,
      GLIGABAO_EXAMPLE_DB: join(withEffect, "example.db")
    }
    const remembered = await runExample(withEffect, "examples/remember-and-search.ts", env)
    expect(remembered.code, remembered.stderr).toBe(0)
    expect(remembered.stdout).toContain("Alice Smith lives in Paris")

    const agent = await runExample(withEffect, "examples/ai-effect-toolkit.ts", {
      ...env,
      GLIGABAO_EXAMPLE_DB: join(withEffect, "agent.db")
    })
    expect(agent.code, agent.stderr).toBe(0)
    expect(agent.stdout).toContain("remember: stored")
    expect(agent.stdout).toContain("search: Alice Smith lives in Paris")

    const served = await startExample(withEffect, "examples/serve-in-your-app.ts", {
      ...env,
      GLIGABAO_EXAMPLE_DB: join(withEffect, "served.db"),
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
  }, 20 * MINUTES)

  it("installs without Effect as documented and runs the plain client and the Vercel AI SDK tools", async () => {
    // the AI SDK's own declarations need @types/json-schema, which it does not depend on, and do
    // not compile under exactOptionalPropertyTypes: skipped here as most apps skip them (the
    // client's declarations are checked in the Effect project, which type-checks plain-client.ts)
    freshProject(withoutEffect, { exactOptionalPropertyTypes: true, skipLibCheck: true }, WITHOUT_EFFECT)
    const [command, ...more] = installCommands().filter((c) => c.includes("--omit=peer"))
    expect(more).toEqual([])
    await npm(withoutEffect, ["install", "--save-dev", "--omit=peer", ...TOOLING])
    await npm(withoutEffect, withTarball(command!, tarball))
    expect(existsSync(join(withoutEffect, "node_modules", "gligabao", "package.json"))).toBe(true)
    expect(existsSync(join(withoutEffect, "node_modules", "effect"))).toBe(false)
    expect(await typeCheck(withoutEffect)).toBe("")

    // the server is the Effect project's installed `gligabao serve`
    const server = await startListening(
      join(withEffect, "node_modules", ".bin", "gligabao"),
      ["serve", "--port", "0", "--db", join(withoutEffect, "served.db")],
      withEffect,
      { ANTHROPIC_API_KEY: "sk-ant-example", ANTHROPIC_BASE_URL: anthropic.url },
      /listening on (http:\/\/[^\s"]+)/
    )
    try {
      const env = { GLIGABAO_URL: server.url }
      const plain = await runExample(withoutEffect, "examples/plain-client.ts", env)
      expect(plain.code, plain.stderr).toBe(0)
      expect(plain.stdout).toContain("Alice Smith lives in Paris")
      // the same script on Bun and Deno, which run TypeScript and resolve `gligabao/client`
      // from node_modules themselves (their binaries from the npm registry, outside the project)
      for (const runtime of await otherRuntimes(base)) {
        // no update check (no network but the registry) and Deno's cache beside the project
        const quiet = { ...env, DENO_NO_UPDATE_CHECK: "1", DENO_DIR: join(base, "deno-cache") }
        const other = await runExample(withoutEffect, "examples/plain-client.ts", quiet, runtime)
        expect(other.code, `${runtime[0]}: ${other.stderr}`).toBe(0)
        expect(other.stdout).toContain("Alice Smith lives in Paris")
        expect(other.stdout).toMatch(/^400: query/m)
      }
      const vercel = await runExample(withoutEffect, "examples/ai-vercel-tools.ts", env)
      expect(vercel.code, vercel.stderr).toBe(0)
      expect(vercel.stdout).toContain("remember: stored")
      expect(vercel.stdout).toContain("search: Alice Smith lives in Paris")
    } finally {
      server.stop()
    }
  }, 15 * MINUTES)
})
