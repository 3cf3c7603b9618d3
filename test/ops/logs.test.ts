/**
 * Logs a shipper can read, and a stop a supervisor can rely on (issue 41, items 4 and 6): with
 * `log_format = "json"` every line `gligabao serve` and `gligabao mcp` write is one JSON object,
 * the start and the stop are logged (the stop with the runs left queued and cut), and `npm start`
 * under a supervisor that signals only the top process leaves no server behind.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { BIN, tempDir } from "../support/cli.js"
import { anthropicMessage, type FakeAnthropic, startFakeAnthropic } from "../support/fakeAnthropic.js"

let fake: FakeAnthropic
beforeAll(async () => {
  fake = await startFakeAnthropic()
  fake.setHandler((request) => anthropicMessage({ text: answer(request.body).text }))
})
afterAll(() => fake?.close())

const ROOT = join(BIN, "..", "..")
const env = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "",
  NO_COLOR: "1",
  ANTHROPIC_API_KEY: "test",
  ANTHROPIC_BASE_URL: fake.url,
  GLIGABAO_LOG_FORMAT: "json",
  ...extra
})

/** Every non-empty line of `text` as a JSON object (a line that is not one fails, naming it). */
const jsonLines = (text: string): Array<Record<string, unknown>> =>
  text.split("\n").filter((line) => line !== "").map((line) => {
    let parsed: unknown
    try {
      parsed = JSON.parse(line)
    } catch {
      throw new Error(`not a JSON line: ${line}`)
    }
    expect(typeof parsed === "object" && parsed !== null && !Array.isArray(parsed), line).toBe(true)
    return parsed as Record<string, unknown>
  })

/** A child's stdout and stderr apart, and its exit. */
const collect = (child: ChildProcess) => {
  const out = { stdout: "", stderr: "" }
  child.stdout?.on("data", (c) => (out.stdout += String(c)))
  child.stderr?.on("data", (c) => (out.stderr += String(c)))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return { out, exited }
}

const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 1200 && !check(); i++) await new Promise((r) => setTimeout(r, 50))
  if (!check()) throw new Error(`timed out waiting for ${what}`)
}

describe("log_format = json", () => {
  it("gligabao serve: only JSON objects on stdout and stderr, its start and its stop with the runs left", async () => {
    const dir = tempDir("gligabao-logs-")
    const child = spawn(process.execPath, [BIN, "serve", "--port", "0", "--db", join(dir.path, "x.db")], {
      cwd: dir.path,
      env: env()
    })
    const { exited, out } = collect(child)
    try {
      await until(() => /listening on http/.test(out.stdout), "the listening line")
      const listening = jsonLines(out.stdout).find((l) => String(l.message).includes("listening on"))!
      const url = String(listening.address)
      const remembered = await fetch(`${url}/v1/gb/remember`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ user_id: "alice", text: "Alice Novak works at Acme in 2020.", wait: true })
      })
      expect(remembered.status).toBe(200)
      // a failing request and a warning-worthy one log too
      expect((await fetch(`${url}/v1/gb/nothing`)).status).toBe(404)
      child.kill("SIGTERM")
      expect(await exited).toBe(0)
      const lines = [...jsonLines(out.stdout), ...jsonLines(out.stderr)]
      const messages = lines.map((l) => (Array.isArray(l.message) ? l.message[0] : l.message))
      expect(messages).toContain("gligabao starting")
      expect(messages).toContain("gligabao stopped")
      const shutdown = lines.find((l) => l.message === "remember runs at shutdown")!
      expect(shutdown.annotations).toEqual({ queued: 0, finished_in_grace: 0, cut_at_shutdown: 0 })
      expect(messages.indexOf("remember runs at shutdown")).toBeLessThan(messages.indexOf("gligabao stopped"))
    } finally {
      child.kill("SIGKILL")
      dir.remove()
    }
  })

  it("gligabao mcp: stderr carries only JSON objects, once each; stdout only the protocol", async () => {
    const dir = tempDir("gligabao-logs-mcp-")
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "--db", join(dir.path, "x.db"), "--user-id", "alice"],
      env: env({ GLIGABAO_LOG_LEVEL: "debug" }),
      cwd: dir.path,
      stderr: "pipe"
    })
    let stderr = ""
    transport.stderr?.on("data", (chunk) => (stderr += String(chunk)))
    const client = new Client({ name: "gligabao-logs", version: "1.0.0" })
    try {
      await client.connect(transport)
      const result: any = await client.callTool({
        name: "remember",
        arguments: { text: "Alice Novak works at Acme in 2020." }
      })
      expect(result.isError ?? false).toBe(false)
    } finally {
      await client.close()
    }
    await until(() => stderr.includes("remember runs at shutdown"), "the stop line")
    const lines = jsonLines(stderr)
    const started = lines.filter((l) => Array.isArray(l.message) && l.message[0] === "gligabao MCP server on stdio")
    expect(started).toHaveLength(1)
    // nothing but log objects: no stray value printed beside them
    for (const line of lines) expect(Object.keys(line)).toEqual(expect.arrayContaining(["message", "logLevel"]))
    dir.remove()
  })
})

describe("npm start", () => {
  it("a SIGTERM to npm alone stops the server: no orphan", async () => {
    const dir = tempDir("gligabao-npm-start-")
    const npm = spawn("npm", ["start", "--", "--db", join(dir.path, "x.db"), "--port", "0"], {
      cwd: ROOT,
      env: { ...env(), GLIGABAO_LOG_FORMAT: "pretty" },
      detached: true
    })
    const { exited, out } = collect(npm)
    try {
      await until(() => /listening on http/.test(out.stdout + out.stderr), "the listening line")
      const children = execFileSync("pgrep", ["-P", String(npm.pid)], { encoding: "utf8" }).trim().split("\n")
      expect(children).toHaveLength(1)
      const server = Number(children[0])
      // the server is npm's own child (no shell in between that would keep the signal to itself)
      expect(execFileSync("ps", ["-o", "args=", "-p", String(server)], { encoding: "utf8" })).toMatch(
        /bin\/gligabao\.js serve/
      )
      npm.kill("SIGTERM")
      await exited
      await until(() => {
        try {
          process.kill(server, 0)
          return false
        } catch {
          return true
        }
      }, "the server to exit")
      expect(out.stdout + out.stderr).toContain("gligabao stopped")
    } finally {
      try {
        process.kill(-npm.pid!, "SIGKILL")
      } catch {
        // already gone
      }
      dir.remove()
    }
  })
})
