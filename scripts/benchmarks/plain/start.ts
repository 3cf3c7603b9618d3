/**
 * Starts the plain implementation (plain/server.ts) as a child process of its own, as the bench
 * starts `gligabao serve`: the same node flags and environment (SERVER_NODE_FLAGS, MALLOC_ARENA_MAX),
 * the same probe preload when asked. The server is one self-contained file, transpiled here
 * with TypeScript's transpileModule into build/bench/plain/ and run by plain node, so that no
 * loader or compiler sits in its memory or its CPU. With a PostgreSQL URL it runs the PostgreSQL
 * one (plain/pgServer.ts) on that database instead.
 */
import { spawn } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import ts from "typescript"
import { defaultConfig } from "../../../src/Config.js"
import {
  buildExtractGraphPrompt,
  EXTRACT_GRAPH_ANSWER,
  EXTRACT_GRAPH_MAX_TOKENS
} from "../../../src/pipeline/prompts/extractGraph.js"
import {
  buildResolveEdgesPrompt,
  RESOLVE_EDGES_ANSWER,
  RESOLVE_EDGES_MAX_TOKENS
} from "../../../src/pipeline/prompts/resolveEdges.js"
import type { Fakes } from "../fakes.js"
import { ROOT, serverEnv, serverNodeFlags } from "../server.js"

export interface PlainServer {
  readonly url: string
  /** its SQLite file or PostgreSQL URL */
  readonly db: string
  readonly pid: number
  readonly stop: () => Promise<void>
}

/** gligabao's prompts and tool schemas, so that both servers send the same requests. */
const writePrompts = (file: string) => {
  const none = { referenceTime: "", text: "" }
  writeFileSync(
    file,
    JSON.stringify({
      model: defaultConfig.llm.defaultModel,
      embeddingModel: defaultConfig.embeddingModel,
      extract: {
        system: buildExtractGraphPrompt(none).system,
        schema: EXTRACT_GRAPH_ANSWER.schema,
        maxTokens: EXTRACT_GRAPH_MAX_TOKENS
      },
      resolve: {
        system: buildResolveEdgesPrompt({ referenceTime: "", newFacts: [], existingFacts: [] }).system,
        schema: RESOLVE_EDGES_ANSWER.schema,
        maxTokens: RESOLVE_EDGES_MAX_TOKENS
      }
    })
  )
}

/** The server as an ES module of plain JavaScript (its imports are packages and node:). */
const transpile = (name: "server" | "pgServer"): string => {
  const dir = join(ROOT, "build", "bench", "plain")
  mkdirSync(dir, { recursive: true })
  const source = readFileSync(join(import.meta.dirname, `${name}.ts`), "utf8")
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, esModuleInterop: true }
  })
  const file = join(dir, `${name}.mjs`)
  writeFileSync(file, outputText)
  return file
}

export const startPlain = (options: {
  /** a SQLite file, or a PostgreSQL URL (`postgres://...`) */
  readonly db: string
  readonly fakes: Fakes
  readonly dims: number
  /** where the prompts go (default: next to the SQLite file) */
  readonly promptsFile?: string | undefined
  /** the probe's JSON file (cpuProbe.cjs), or none */
  readonly probeFile?: string | undefined
}): Promise<PlainServer> =>
  new Promise((resolve, reject) => {
    const postgres = options.db.startsWith("postgres://")
    const entry = transpile(postgres ? "pgServer" : "server")
    const prompts = options.promptsFile ?? `${options.db}.prompts.json`
    writePrompts(prompts)
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      ...serverEnv(),
      ...(postgres ? { PLAIN_DATABASE_URL: options.db } : { PLAIN_DB: options.db }),
      PLAIN_ANTHROPIC_URL: options.fakes.anthropicUrl,
      PLAIN_OPENAI_URL: options.fakes.openAiUrl,
      PLAIN_DIMS: String(options.dims),
      PLAIN_PROMPTS: prompts
    }
    if (options.probeFile !== undefined) {
      env.NODE_OPTIONS = `--require ${join(ROOT, "scripts", "benchmarks", "cpuProbe.cjs")}`
      env.GLIGABAO_BENCH_PROBE = options.probeFile
      if (postgres) env.GLIGABAO_BENCH_PROBE_PG = "1"
    }
    const child = spawn(process.execPath, [...serverNodeFlags(), entry], {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    let up = false
    child.stdout!.on("data", (chunk) => {
      out += chunk
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m && !up) {
        up = true
        resolve({
          url: m[1]!,
          db: options.db,
          pid: child.pid!,
          stop: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null) return done()
              const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
              child.once("exit", () => (clearTimeout(timer), done()))
              child.kill("SIGTERM")
            })
        })
      }
    })
    child.stderr!.on("data", (chunk) => (err = (err + chunk).slice(-4000)))
    child.on("exit", (code) => {
      if (!up) reject(new Error(`the plain server exited with ${code} before listening: ${out}${err}`))
      else if (code !== 0 && code !== null) process.stderr.write(`the plain server exited with ${code}: ${err}\n`)
    })
  })
