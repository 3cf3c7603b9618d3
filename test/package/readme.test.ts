/**
 * The README's embedding and client sections are examples/remember-and-search.ts and
 * examples/plain-client.ts, verbatim: the pack test compiles and runs them (and
 * test/client/plain.test.ts runs the client's against a server).
 */
import { readFileSync } from "node:fs"
import { expect, it } from "vitest"

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8")

it("the README shows the embedding example as it is", () => {
  const readme = read("README.md")
  const section = readme.slice(readme.indexOf("## Embedding gligabao in an Effect app"))
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1]
  expect(code).toBe(read("examples/remember-and-search.ts"))
})

it("the README shows the plain client's example as it is", () => {
  const readme = read("README.md")
  const section = readme.slice(readme.indexOf("## Clients"))
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1]
  expect(code).toBe(read("examples/plain-client.ts"))
})
