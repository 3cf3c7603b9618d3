/**
 * Reads V8 CPU profiles (`scripts/bench --profile` writes one per server into
 * build/bench/profiles/<run>/<scenario>-<config>/) and prints where the time went:
 *
 *   npx tsx scripts/bench-profile.ts DIR_OR_FILE [--top 25] [--match TEXT] [--all]
 *
 * Per profile: busy time (idle excluded), self time by package or source folder, the top
 * functions by self time and by inclusive time (time with that function on the stack).
 * `--match` keeps only functions whose name or file contains TEXT in the inclusive list.
 * Startup (loading and transpiling modules) is left out: samples before the first one with a
 * frame of src/http/ (the first request) are skipped, unless `--all`. A profile that never
 * served a request (the module loader's worker thread) is skipped too.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}
interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly children?: ReadonlyArray<number>
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const argv = process.argv.slice(2)
const value = (flag: string) => {
  const i = argv.indexOf(flag)
  return i === -1 ? undefined : argv[i + 1]
}
const TOP = Number(value("--top") ?? 25)
const MATCH = value("--match")
const ALL = argv.includes("--all")
const target = argv.find((a, i) => !a.startsWith("--") && !argv[i - 1]?.startsWith("--"))
if (target === undefined) {
  console.error("usage: npx tsx scripts/bench-profile.ts DIR_OR_FILE [--top N] [--match TEXT]")
  process.exit(2)
}

const files = (path: string): Array<string> =>
  statSync(path).isDirectory()
    ? readdirSync(path).flatMap((f) => files(join(path, f)))
    : path.endsWith(".cpuprofile")
    ? [path]
    : []

const ROOT = process.cwd()
const where = (url: string): string => {
  if (url === "") return "(native)"
  const path = url.replace(/^file:\/\//, "")
  const nm = path.lastIndexOf("node_modules/")
  if (nm !== -1) {
    const rest = path.slice(nm + 13).split("/")
    return `node_modules/${rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]}`
  }
  if (path.startsWith("node:")) return "node:internal"
  const rel = relative(ROOT, path)
  return rel.startsWith("..") ? path : rel.split("/").slice(0, 2).join("/")
}

const label = (f: CallFrame) => {
  const path = f.url.replace(/^file:\/\//, "")
  const nm = path.lastIndexOf("node_modules/")
  const file = nm !== -1 ? path.slice(nm + 13) : path.startsWith("node:") ? path : relative(ROOT, path)
  return `${f.functionName || "(anonymous)"} ${file === "" ? "" : `${file}:${f.lineNumber + 1}`}`.trim()
}

const IDLE = new Set(["(idle)", "(program)"])

const report = (file: string) => {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const self = new Map<string, number>()
  const inclusive = new Map<string, number>()
  const groups = new Map<string, number>()
  let busy = 0
  let idle = 0
  const stack = (id: number) => {
    const out: Array<ProfileNode> = []
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) out.push(byId.get(at)!)
    return out
  }
  const first = ALL
    ? 0
    : profile.samples.findIndex((id) => stack(id).some((n) => n.callFrame.url.includes("/src/http/")))
  if (first === -1) return
  const skipped = profile.timeDeltas.slice(0, first).reduce((a, b) => a + b, 0) / 1e6
  profile.samples.forEach((id, i) => {
    if (i < first) return
    const ms = (profile.timeDeltas[i] ?? 0) / 1000
    const node = byId.get(id)!
    if (IDLE.has(node.callFrame.functionName)) {
      idle += ms
      return
    }
    busy += ms
    const key = label(node.callFrame)
    self.set(key, (self.get(key) ?? 0) + ms)
    const group = node.callFrame.functionName === "(garbage collector)"
      ? "(garbage collector)"
      : where(node.callFrame.url)
    groups.set(group, (groups.get(group) ?? 0) + ms)
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const k = label(byId.get(at)!.callFrame)
      if (k === "(root)" || seen.has(k)) continue
      seen.add(k)
      inclusive.set(k, (inclusive.get(k) ?? 0) + ms)
    }
  })
  const top = (m: Map<string, number>, n: number, filter: (k: string) => boolean = () => true) =>
    [...m].filter(([k]) => filter(k)).sort((a, b) => b[1] - a[1]).slice(0, n)
  const pct = (ms: number) => `${((100 * ms) / busy).toFixed(1)}%`
  console.log(
    `\n## ${relative(ROOT, file)}\nbusy ${(busy / 1000).toFixed(2)} s, idle ${(idle / 1000).toFixed(2)} s${
      ALL ? "" : ` (startup, ${skipped.toFixed(1)} s, left out)`
    }\n`
  )
  console.log("self time by package or folder:")
  for (const [k, ms] of top(groups, 15)) console.log(`  ${pct(ms).padStart(6)} ${ms.toFixed(0).padStart(7)} ms  ${k}`)
  console.log("\ntop functions by self time:")
  for (const [k, ms] of top(self, TOP)) console.log(`  ${pct(ms).padStart(6)} ${ms.toFixed(0).padStart(7)} ms  ${k}`)
  console.log(`\ntop functions by inclusive time${MATCH === undefined ? "" : ` matching ${MATCH}`}:`)
  for (const [k, ms] of top(inclusive, TOP, (k) => MATCH === undefined || k.includes(MATCH))) {
    console.log(`  ${pct(ms).padStart(6)} ${ms.toFixed(0).padStart(7)} ms  ${k}`)
  }
}

for (const file of files(target)) report(file)
