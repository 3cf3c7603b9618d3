#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=4
// Runs the compiled CLI (build/dist, made by `npm ci` through the `prepare` script) when it is
// at least as new as every source file; otherwise the TypeScript directly through tsx's loader,
// so a fresh clone or an edited source never runs stale code. The compiled form starts faster
// and holds about 100 MB less (tsx keeps its compiler in memory).
import { existsSync, readdirSync, statSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import v8 from "node:v8"

// The shebang (and `npm start`) give V8 young-generation semi-spaces of 4 MB instead of 16: a
// remember allocates much that dies young, and the larger space was ~30 MB of resident memory
// idle and at peak (1 MiB text: 326 -> 293 MB) for 5-8% of CPU time saved. They also limit
// glibc to two malloc arenas (MALLOC_ARENA_MAX=2): SQLite's allocations on the main thread and
// on the vector reader's worker thread otherwise fragment an arena each (1 MiB text: 300-303 ->
// 279-289 MB). Both have to be set before node starts (V8 sizes the young generation when the
// heap is made; glibc reads the variable at startup), so `node bin/gligabao.js` runs without
// them. scripts/benchmarks/server.ts (SERVER_ENV, SERVER_NODE_FLAGS) starts servers the same way.
//
// V8 lets the old generation grow up to four times what survived the last full collection
// before it collects again. A remember promotes much short-lived data (vectors, model answers,
// rows) that dies soon after, so the server idled at 100 MB of live heap and peaked at 330 MB of
// heap (512 MB resident) remembering a 1 MiB text. Growing by a quarter at most collects that
// garbage sooner (measured on the 1 MiB remember: peak 509 -> 382 MB resident; 456 -> 302 MB
// once the pipeline no longer keeps every chunk's vectors). It is not a cap like
// --max-old-space-size: a heap that needs more still gets it, it never dies of the limit. V8 reads this flag at every full
// collection, so setting it here, before any work, takes effect without re-executing node.
// GLIGABAO_HEAP_GROWING_PERCENT overrides it (0: V8's own heuristic).
const growing = process.env.GLIGABAO_HEAP_GROWING_PERCENT ?? "25"
if (/^\d+$/.test(growing) && !/heap.growing.percent/.test(`${process.execArgv.join(" ")} ${process.env.NODE_OPTIONS ?? ""}`))
  v8.setFlagsFromString(`--heap-growing-percent=${growing}`)

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const compiled = join(root, "build", "dist", "src", "cli", "main.js")

/** The newest modification time of the .ts files under `dir`. */
const newestSource = (dir) => {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path))
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(path).mtimeMs)
  }
  return newest
}

const fresh = existsSync(compiled) &&
  process.env.GLIGABAO_TSX !== "1" &&
  statSync(compiled).mtimeMs >= Math.max(newestSource(join(root, "src")), newestSource(join(root, "layers")))

if (fresh) {
  await import(pathToFileURL(compiled).href)
} else {
  const { register } = await import("tsx/esm/api")
  register()
  await import(pathToFileURL(join(root, "src", "cli", "main.ts")).href)
}
