/**
 * The plain client (`gligabao/client`) in a real browser (Debian's Chromium): a page on another
 * origin loads the client's modules (src/client compiled as the build compiles it, served as
 * they are) and calls a real `gligabao serve` that lists the page's origin in
 * `GLIGABAO_CORS_ORIGINS`, with a token: a remember, a search, and a 400 read as a `GligabaoError`.
 * With tokens, the preflight (which carries none) must reach the CORS guard before authentication.
 */
import { readdirSync, readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Browser } from "playwright-core"
import ts from "typescript"
import { afterAll, beforeAll, expect, it } from "vitest"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { launchChromium, watchPage } from "../support/browser.js"
import { type SpawnedServer, startServer } from "../support/cli.js"
import { type FakeAnthropic, startFakeAnthropic } from "../support/fakeAnthropic.js"

const TOKEN = "browser-token-0123456789abcdef"
const CLIENT_DIR = new URL("../../src/client/", import.meta.url)

/** Each module of src/client as the build emits it (ES2022 modules, types erased). */
const compiledClient = (): Map<string, string> =>
  new Map(
    readdirSync(CLIENT_DIR).filter((f) => f.endsWith(".ts")).map((file) => [
      file.replace(/\.ts$/, ".js"),
      ts.transpileModule(readFileSync(new URL(file, CLIENT_DIR), "utf8"), {
        compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022 }
      }).outputText
    ])
  )

let page: Server
let pageOrigin: string
let fake: FakeAnthropic
let server: SpawnedServer
let browser: Browser

beforeAll(async () => {
  const modules = compiledClient()
  page = createServer((request, response) => {
    const name = (request.url ?? "/").replace(/^\/client\//, "")
    const source = modules.get(name)
    if (source !== undefined) {
      response.writeHead(200, { "content-type": "text/javascript" }).end(source)
    } else {
      response.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>client</title>")
    }
  })
  await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve))
  pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`
  fake = await startFakeAnthropic({ text: (request) => answer(request.body).text })
  server = await startServer({
    env: {
      ANTHROPIC_API_KEY: "test",
      ANTHROPIC_BASE_URL: fake.url,
      GLIGABAO_AUTH_TOKENS: JSON.stringify([{ token: TOKEN, user_id: "alice" }]),
      GLIGABAO_CORS_ORIGINS: pageOrigin
    }
  })
  browser = await launchChromium()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await fake?.close()
  await new Promise((resolve) => page?.close(resolve))
})

it("remembers and searches from a page on another origin, and reads a 400 as a GligabaoError", async () => {
  const tab = await browser.newPage()
  const watch = watchPage(tab)
  await tab.goto(`${pageOrigin}/`)
  // a string, as the page's own script would be: the test runner rewrites a function's `import()`
  const result: any = await tab.evaluate(`(async () => {
    const { Gligabao, GligabaoError } = await import("/client/index.js")
    const gligabao = new Gligabao({ baseUrl: ${JSON.stringify(server.url)}, token: ${JSON.stringify(TOKEN)} })
    await gligabao.remember({ user_id: "alice", text: "Alice Smith lives in Paris." })
    const found = await gligabao.search({ user_id: "alice", query: "Where does Alice Smith live?" })
    const error = await gligabao.search({ user_id: "alice", query: "" }).catch((e) => e)
    return {
      facts: found.facts.map((f) => f.description),
      typed: error instanceof GligabaoError,
      status: error.status,
      text: error.error
    }
  })()`)
  expect(result.facts).toContain("Alice Smith lives in Paris")
  expect(result).toMatchObject({ typed: true, status: 400, text: expect.stringMatching(/query/) })
  // the browser logs the 400 it was given; nothing else went wrong
  expect(watch.errors.filter((e) => !e.includes("status of 400"))).toEqual([])
}, 60_000)
