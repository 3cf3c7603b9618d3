/**
 * The Python client (clients/python, issue 43) as its users run it: the Python on the machine
 * (`python3`), the package from the checkout, against a real `gligabao serve` with tokens and the
 * fake model (layers/testing/FactSentenceModel.ts behind the fake Anthropic API, a query answered
 * as our prompt asks). Checks that the committed generated types are what the generator makes of
 * the document the server serves, runs the Python test suite (unit and server tests), and runs the
 * README's examples, which must be the files under clients/python/examples.
 *
 * Without python3 the Python parts fail under CI=true and are skipped, loudly, elsewhere.
 */
import { spawn, spawnSync } from "node:child_process"
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { PYTHON_TYPES_FILE } from "../../scripts/generate-python-client.js"
import { pythonTypes } from "../../scripts/python-client/generate.js"
import { GLIGABAO_VERSION } from "../../src/Config.js"
import { openApiDocument } from "../../src/http/Http.js"
import { BIN, type SpawnedServer, startServer } from "../support/cli.js"
import { type RecordedRequest, startFakeAnthropic } from "../support/fakeAnthropic.js"

const CLIENT = join(BIN, "..", "..", "clients", "python")
const PYTHON = "python3"
const USER = "alice"
const TOKEN = "alice-python-client-token-7Qe2"

/** Why the Python parts cannot run here, or null when they can. */
const pythonMissing = ((): string | null => {
  const probe = spawnSync(PYTHON, ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], {
    encoding: "utf8",
    env: process.env
  })
  if (probe.error !== undefined || probe.status !== 0) {
    return `${PYTHON} is not installed (${probe.error ?? probe.stderr})`
  }
  const [major, minor] = probe.stdout.trim().split(".").map(Number)
  return major! > 3 || (major === 3 && minor! >= 9)
    ? null
    : `${PYTHON} is ${probe.stdout.trim()}; the client needs 3.9+`
})()
if (pythonMissing !== null) {
  if (process.env.CI === "true") throw new Error(`CI needs Python 3.9+ for the Python client's tests: ${pythonMissing}`)
  console.warn(`!!! SKIPPING the Python client's tests: ${pythonMissing}`)
}

/**
 * Answers as a model following our prompts: the fake model for the remember stages; for a query,
 * the fact given that shares most words with the question (cited), or "not known" citing nothing.
 */
const modelText = (request: RecordedRequest): string => {
  const system = JSON.stringify(request.body?.system ?? "")
  if (!system.includes("You answer questions from the facts")) return answer(request.body).text
  const input = JSON.parse(request.body.messages[0].content)
  const asked = String(input.question).toLowerCase().match(/\p{L}{3,}/gu) ?? []
  const overlap = (statement: string) => {
    const words = statement.toLowerCase().match(/\p{L}+/gu) ?? []
    return asked.filter((a) => words.some((w) => w.startsWith(a))).length
  }
  const best = [...input.facts].sort((a: any, b: any) => overlap(b.statement) - overlap(a.statement))[0]
  return JSON.stringify(
    best === undefined || overlap(best.statement) === 0
      ? { answer: "That is not known from what is stored.", citations: [] }
      : { answer: `${best.statement}.`, citations: [best.id] }
  )
}

/**
 * A gate in front of the fake model: a text holding `hold:<key>` is answered once something
 * POSTs /gate/<key> to it, so a Python test can watch a run's events before the run can end.
 */
const startGatedModel = async () => {
  const model = await startFakeAnthropic({ text: modelText })
  const opened = new Map<string, () => void>()
  const gates = new Map<string, Promise<void>>()
  const gate = (key: string) => {
    if (!gates.has(key)) gates.set(key, new Promise<void>((resolve) => opened.set(key, resolve)))
    return gates.get(key)!
  }
  const front = await startFakeAnthropic()
  front.setHandler(async (request) => {
    const key = /^\/gate\/([\w-]+)$/.exec(request.path)?.[1]
    if (key !== undefined) {
      void gate(key)
      opened.get(key)!()
      return { json: { opened: key } }
    }
    const held = /hold:([\w-]+)/.exec(request.rawBody)?.[1]
    if (held !== undefined) await gate(held)
    const res = await fetch(`${model.url}${request.path}`, {
      method: request.method,
      headers: { "content-type": "application/json", "x-api-key": "test" },
      body: request.rawBody
    })
    return { status: res.status, json: await res.json() }
  })
  return { front, model, close: () => Promise.all([front.close(), model.close()]) }
}

interface Ran {
  readonly code: number | null
  readonly output: string
}

/** Runs python3 in clients/python with the package from the checkout, no bytecode written. */
const python = (args: ReadonlyArray<string>, env: Record<string, string> = {}, cwd = CLIENT): Promise<Ran> =>
  new Promise((resolve) => {
    const child = spawn(PYTHON, args, {
      cwd,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "",
        LANG: "C.UTF-8",
        PYTHONDONTWRITEBYTECODE: "1",
        PYTHONPATH: CLIENT,
        // pyenv's choice, so the suite can be run with another version (PYENV_VERSION=3.9.18)
        ...(process.env.PYENV_VERSION === undefined ? {} : { PYENV_VERSION: process.env.PYENV_VERSION }),
        ...env
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    const guard = setTimeout(() => child.kill("SIGKILL"), 240_000)
    child.once("exit", (code) => {
      clearTimeout(guard)
      resolve({ code, output })
    })
  })

const JSON_DOCUMENT = JSON.parse(JSON.stringify(openApiDocument))

describe("the generated types", () => {
  it("clients/python/gligabao/_types.py is what the generator makes of the served document", () => {
    // on a difference: npx tsx scripts/generate-python-client.ts
    expect(readFileSync(PYTHON_TYPES_FILE, "utf8")).toBe(pythonTypes(JSON_DOCUMENT))
  })

  it("carries the server's version, which the package takes as its own", () => {
    expect(readFileSync(PYTHON_TYPES_FILE, "utf8")).toContain(`API_VERSION = "${GLIGABAO_VERSION}"`)
    expect(readFileSync(join(CLIENT, "pyproject.toml"), "utf8")).toContain(
      `version = { attr = "gligabao._types.API_VERSION" }`
    )
  })

  it("refuses a document with an operation the client neither calls nor leaves out", () => {
    const doc = structuredClone(JSON_DOCUMENT)
    doc.paths["/v1/gb/new"] = { get: { operationId: "read.somethingNew", responses: {} } }
    expect(() => pythonTypes(doc)).toThrow(/read\.somethingNew .* neither in the Python client nor left out/)
  })
})

describe("against gligabao serve", () => {
  let gated: Awaited<ReturnType<typeof startGatedModel>>
  let server: SpawnedServer
  let env: Record<string, string>
  beforeAll(async () => {
    gated = await startGatedModel()
    server = await startServer({
      env: {
        ANTHROPIC_API_KEY: "test",
        ANTHROPIC_BASE_URL: gated.front.url,
        GLIGABAO_AUTH_TOKENS: JSON.stringify([{ token: TOKEN, user_id: USER }])
      }
    })
    env = {
      GLIGABAO_URL: server.url,
      GLIGABAO_TOKEN: TOKEN,
      GLIGABAO_TEST_USER: USER,
      GLIGABAO_TEST_GATE: `${gated.front.url}/gate`
    }
  })
  afterAll(async () => {
    await server?.stop()
    await gated?.close()
  })

  it("serves at /openapi.json the document the generator reads", async () => {
    const res = await fetch(`${server.url}/openapi.json`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual(JSON_DOCUMENT)
  })

  it.skipIf(pythonMissing !== null)("passes the Python test suite (unit tests and calls to the server)", async () => {
    const ran = await python(["-m", "unittest", "discover", "-v", "-s", "tests", "-t", "."], env)
    expect(ran.code, ran.output).toBe(0)
    // every server test ran: none skipped for want of GLIGABAO_URL
    expect(ran.output, ran.output).not.toMatch(/skipped/)
    expect(ran.output).toMatch(/^OK$/m)
    // the events test held its run's extraction until it had read the stream's first event
    const paths = gated.front.requests.map((r) => r.path)
    expect(paths.filter((p) => p.startsWith("/gate/"))).toHaveLength(1)
    expect(gated.front.requests.some((r) => /hold:[\w-]+/.test(r.rawBody))).toBe(true)
  }, 300_000)

  it.skipIf(pythonMissing !== null)("runs the README's examples, which are the example files", async () => {
    const readme = readFileSync(join(CLIENT, "README.md"), "utf8")
    const blocks = [...readme.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]!)
    const examples = readdirSync(join(CLIENT, "examples")).filter((f) => f.endsWith(".py")).sort()
    expect(examples).toEqual(Object.keys(EXPECTED_OUTPUT).sort())
    for (const file of examples) {
      const text = readFileSync(join(CLIENT, "examples", file), "utf8")
      expect(blocks, `README.md quotes examples/${file} whole`).toContain(text)
      const ran = await python([join("examples", file)], { GLIGABAO_URL: server.url, GLIGABAO_TOKEN: TOKEN })
      expect(ran.code, `examples/${file}:\n${ran.output}`).toBe(0)
      expect(ran.output, file).toMatch(EXPECTED_OUTPUT[file]!)
    }
  }, 120_000)
})

/** What each example prints when it works. */
const EXPECTED_OUTPUT: Record<string, RegExp> = {
  "remember_and_search.py": /Alice Novak works at Acme/,
  "context.py": /# Facts[\s\S]*Alice Novak/,
  "errors.py": /400: [\s\S]*limit/,
  "follow_a_run.py": /^stage store$[\s\S]*^succeeded $[\s\S]*Alice Novak visited Porto/m,
  "async_client.py": /^succeeded$[\s\S]*Alice Novak visited Lima/m
}

/** Builds the sdist of the package in argv[1] into argv[2] with the setuptools installed, if it is 61+. */
const BUILD_SDIST = `
import os, sys
try:
    import setuptools
    from setuptools import build_meta
except ImportError:
    sys.exit(print("NO SETUPTOOLS: setuptools is not installed"))
if int(setuptools.__version__.split(".")[0]) < 61:
    sys.exit(print("NO SETUPTOOLS: setuptools " + setuptools.__version__ + " is older than 61"))
os.chdir(sys.argv[1])
print(build_meta.build_sdist(sys.argv[2]))
`

describe.skipIf(pythonMissing !== null)("the package", () => {
  it("builds as pyproject.toml declares it: the package, its marker, no dependencies", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gligabao-python-"))
    try {
      // a copy: a build writes into its source tree
      cpSync(CLIENT, join(dir, "src"), { recursive: true, filter: (path) => !path.includes("__pycache__") })
      // pip builds with the setuptools pyproject.toml requires (61+, which reads [project]); without
      // one here (no network in tests) the build is skipped, loudly
      const ran = await python(["-c", BUILD_SDIST, join(dir, "src"), join(dir, "dist")], {}, dir)
      const unable = /^NO SETUPTOOLS: (.*)$/m.exec(ran.output)
      if (unable !== null) {
        console.warn(`!!! SKIPPING the Python package build: ${unable[1]}`)
        return
      }
      expect(ran.code, ran.output).toBe(0)
      const sdist = join(dir, "dist", ran.output.trim().split("\n").pop()!)
      const listed = spawnSync("tar", ["-tzf", sdist], { encoding: "utf8" }).stdout
      for (const file of ["_types.py", "client.py", "aio.py", "py.typed"]) {
        expect(listed).toContain(`gligabao-${GLIGABAO_VERSION}/gligabao/${file}`)
      }
      const info = spawnSync("tar", ["-xzOf", sdist, `gligabao-${GLIGABAO_VERSION}/PKG-INFO`], { encoding: "utf8" })
      expect(info.stdout).toContain(`Version: ${GLIGABAO_VERSION}`)
      expect(info.stdout).toContain("Requires-Python: >=3.9")
      expect(info.stdout).not.toContain("Requires-Dist")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
