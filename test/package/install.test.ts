/**
 * docs/EMBEDDING.md's install commands against package.json: every peer dependency is named with
 * the range gligabao declares (`effect` unpinned would install `latest`, Effect 4, and fail with
 * ERESOLVE), the optional ones with a range inside theirs, and nothing else is pinned. The pack
 * test runs the same commands; this check needs no network.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { installCommands, packageOf, words } from "./installCommands.js"

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"))
const peers: Record<string, string> = pkg.peerDependencies
const optional = new Set(
  Object.keys(pkg.peerDependenciesMeta ?? {}).filter((n) => pkg.peerDependenciesMeta[n].optional)
)

const installs = () =>
  installCommands().filter((c) => c.startsWith("npm install ")).map((c) =>
    words(c).slice(2).filter((w) => !w.startsWith("-"))
  )

describe("the documented install", () => {
  it("names every required peer with package.json's range, in the command that installs gligabao", () => {
    const library = installs().find((args) => args.includes("gligabao") && !args.includes("ai@^7"))
    expect(library).toBeDefined()
    const named = Object.fromEntries(library!.map(packageOf).map((p) => [p.name, p.range]))
    for (const [name, range] of Object.entries(peers)) {
      if (!optional.has(name)) expect({ name, range: named[name] }).toEqual({ name, range })
    }
    expect(named.gligabao).toBeUndefined()
  })

  it("names each optional peer with a range within gligabao's", () => {
    const named = new Map(installs().flat().map(packageOf).map((p) => [p.name, p.range]))
    for (const name of optional) {
      const range = named.get(name)
      expect(range, name).toBeDefined()
      // the range is one of the declared alternatives (`^6.0.0 || ^7.0.0` takes `^7`), or the declared one
      const majors = peers[name]!.split("||").map((r) => r.trim().replace(/\.0\.0$/, ""))
      expect([peers[name], ...majors], name).toContain(range)
    }
  })

  it("is the README's too", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8")
    const section = readme.slice(readme.indexOf("## Embedding gligabao in an Effect app"))
    const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1]
    expect(block).toBeDefined()
    expect(installCommands(`## Install\n\n\`\`\`sh\n${block}\`\`\`\n`)).toEqual(installCommands().slice(0, 2))
  })

  it("approves better-sqlite3's install script before installing, and keeps Effect out of the plain one", () => {
    const commands = installCommands()
    expect(commands[0]).toBe("npm pkg set allowScripts.better-sqlite3=true --json")
    const plain = commands.find((c) => c.includes("--omit=peer"))
    expect(plain).toBeDefined()
    expect(words(plain!).map(packageOf).map((p) => p.name)).not.toContain("effect")
  })
})
