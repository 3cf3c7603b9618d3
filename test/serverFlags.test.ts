/**
 * The server's node flags are written in three places that node reads separately: `npm start`,
 * bin/gligabao.js's shebang (for `gligabao` on the PATH and `npx gligabao`), and the bench and
 * load scripts (SERVER_NODE_FLAGS), which must measure the server as it is started.
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { SERVER_NODE_FLAGS } from "../scripts/benchmarks/server.js"

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { scripts: Record<string, string> }
const shebang = readFileSync(new URL("../bin/gligabao.js", import.meta.url), "utf8").split("\n")[0]!

describe("the server's node flags", () => {
  it("are the same for npm start, the bin's shebang and the bench", () => {
    expect(SERVER_NODE_FLAGS.length).toBeGreaterThan(0)
    expect(pkg.scripts["start"]).toBe(`node ${SERVER_NODE_FLAGS.join(" ")} bin/gligabao.js serve`)
    expect(shebang).toBe(`#!/usr/bin/env -S node ${SERVER_NODE_FLAGS.join(" ")}`)
  })
})
