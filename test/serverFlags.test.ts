/**
 * The server's node flags and environment (MALLOC_ARENA_MAX) are written in three places: `npm start`,
 * bin/gligabao.js's shebang (for `gligabao` on the PATH and `npx gligabao`), and the bench and
 * load scripts (SERVER_NODE_FLAGS), which must measure the server as it is started.
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { SERVER_ENV, SERVER_NODE_FLAGS } from "../scripts/benchmarks/server.js"

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  scripts: Record<string, string>
}
const shebang = readFileSync(new URL("../bin/gligabao.js", import.meta.url), "utf8").split("\n")[0]!

describe("the server's node flags", () => {
  it("are the same for npm start, the bin's shebang and the bench, and so is the environment they set", () => {
    expect(SERVER_NODE_FLAGS.length).toBeGreaterThan(0)
    const env = Object.entries(SERVER_ENV).map(([name, value]) => `${name}=${value}`).join(" ")
    const command = `${env} node ${SERVER_NODE_FLAGS.join(" ")}`
    // exec: npm's own child is the server, so a supervisor's SIGTERM to npm reaches it (test/ops/logs.test.ts)
    expect(pkg.scripts["start"]).toBe(`exec env ${command} bin/gligabao.js serve`)
    expect(shebang).toBe(`#!/usr/bin/env -S ${command}`)
  })
})
