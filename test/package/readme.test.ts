/** The README's embedding section is examples/remember-and-search.ts, verbatim: it is compiled and run by pack.test.ts. */
import { readFileSync } from "node:fs"
import { expect, it } from "vitest"

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8")

it("the README shows the embedding example as it is", () => {
  const readme = read("README.md")
  const section = readme.slice(readme.indexOf("## Embedding gligabao in an Effect app"))
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1]
  expect(code).toBe(read("examples/remember-and-search.ts"))
})
