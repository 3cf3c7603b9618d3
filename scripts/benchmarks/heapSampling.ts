/**
 * Where the main thread's V8 heap bytes are allocated (scripts/bench-alloc.ts, issue 39): V8's
 * sampling heap profiler through the same-thread inspector, with the objects that minor and
 * major collections freed kept in the profile (includeObjectsCollectedByMajorGC/MinorGC; V8 11.3
 * in Node 20 has both), so a profile counts everything allocated while it ran, not what
 * survived. Each sample's stack is mapped through tsx's inline source maps to the .ts lines of
 * src/, layers/ and scripts/, and added up by function, by package or folder, and inclusively by
 * every frame of ours on the stack.
 */
import { Session } from "node:inspector"
import { type ParsedScript, sourceLine } from "./sourceLines.js"

interface CallFrame {
  readonly functionName: string
  readonly scriptId: string
  readonly url: string
  readonly lineNumber: number
  readonly columnNumber: number
}
export interface ProfileNode {
  readonly callFrame: CallFrame
  readonly selfSize: number
  readonly id: number
  readonly children: ReadonlyArray<ProfileNode>
}
export interface SamplingProfile {
  readonly head: ProfileNode
  readonly samples: ReadonlyArray<{ size: number; nodeId: number; ordinal: number }>
}

const session = new Session()
session.connect()
const post = <A = any>(method: string, params?: object): Promise<A> =>
  new Promise((resolve, reject) =>
    session.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result as A)))
  )

/** samples about every `interval` bytes allocated (V8 scales each sample to an estimate of the bytes it stands for) */
export const startSampling = async (interval: number) => {
  await post("HeapProfiler.enable")
  await post("HeapProfiler.collectGarbage")
  await post("HeapProfiler.startSampling", {
    samplingInterval: interval,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true
  })
}
export const stopSampling = async (): Promise<SamplingProfile> =>
  (await post<{ profile: SamplingProfile }>("HeapProfiler.stopSampling")).profile

// ---- source locations ----

const scripts = new Map<string, ParsedScript>()
/**
 * Learns every script's URL and source map. Called after the profiles are taken: the debugger
 * reports each script already parsed when it is enabled, and stays off while we measure.
 */
export const loadScripts = async () => {
  const listener = ({ params }: { params: { scriptId: string; url: string; sourceMapURL?: string } }) =>
    void scripts.set(params.scriptId, { url: params.url, sourceMapURL: params.sourceMapURL ?? "" })
  session.on("Debugger.scriptParsed", listener)
  await post("Debugger.enable")
  await post("Debugger.disable")
  session.off("Debugger.scriptParsed", listener)
}

export interface Frame {
  /** `name file:line` */
  readonly key: string
  readonly file: string
  /** a package (`effect`, `@effect/sql`), a folder of ours (`src/pipeline`), `node:internal`, or a VM state */
  readonly group: string
  /** in src/ or layers/, and not a scheduler of ours (RUNTIME_FILES) */
  readonly own: boolean
  /** a builtin (Map#set, an iterator's next, Array#push): counted at its caller */
  readonly builtin: boolean
  /** in RUNTIME_FILES */
  readonly runtime: boolean
}

/**
 * Files of ours that run fibers, as Effect's run loop does: nearly every remember run's
 * continuation is called from the runs' scheduler's drain loop, which says nothing about what
 * allocated. Not counted as frames of ours; their presence on a stack is counted apart.
 */
export const RUNTIME_FILES: ReadonlyArray<string> = ["src/pipeline/RunScheduler.ts"]

/** `node_modules/@effect/sql/dist/...` is @effect/sql; src/pipeline/remember/x.ts is src/pipeline/remember. */
const groupOf = (file: string): string => {
  const pkg = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)
  if (pkg !== null) return pkg[1]!
  if (file.startsWith("node:internal/") || file.startsWith("node:")) return "node:internal"
  const ours = /^(src|layers|scripts|test)\/(.*)\//.exec(file)
  if (ours !== null) return `${ours[1]}/${ours[2]!.split("/").slice(0, 2).join("/")}`
  if (/^(src|layers|scripts|test)\//.test(file)) return file.split("/")[0]!
  return file === "" ? "(no script)" : file
}

const frames = new Map<string, Frame>()
const frameOf = (cf: CallFrame): Frame => {
  const id = `${cf.scriptId}:${cf.lineNumber}:${cf.columnNumber}:${cf.functionName}`
  let frame = frames.get(id)
  if (frame !== undefined) return frame
  const name = cf.functionName === "" ? "(anonymous)" : cf.functionName
  if (cf.url === "") {
    // a VM state with no JS frame ((V8 API), (EXTERNAL), (GC), (BYTECODE_COMPILER)...), or a builtin
    const vm = name.startsWith("(")
    frame = { key: vm ? name : `${name} (builtin)`, file: "", group: name, own: false, builtin: !vm, runtime: false }
  } else {
    const script = scripts.get(cf.scriptId)
    const { file, line } = sourceLine(cf.url, script, cf.lineNumber, cf.columnNumber)
    const runtime = RUNTIME_FILES.includes(file)
    const own = !runtime && /^(src|layers)\//.test(file)
    frame = { key: `${name} ${file}:${line}`, file, group: groupOf(file), own, builtin: false, runtime }
  }
  frames.set(id, frame)
  return frame
}

// ---- aggregation ----

export const bump = (m: Map<string, number>, k: string, n: number) => m.set(k, (m.get(k) ?? 0) + n)

export interface Tallies {
  total: number
  samples: number
  /** self bytes by function (`name file:line`) */
  readonly byFunction: Map<string, number>
  /** self bytes by the innermost frame's file (a builtin's caller's) */
  readonly byFile: Map<string, number>
  /** self bytes by the innermost frame's package or folder */
  readonly byGroup: Map<string, number>
  /** bytes with this frame of ours anywhere on the stack (counted once per stack) */
  readonly ownInclusive: Map<string, number>
  /** bytes with this file of ours anywhere on the stack */
  readonly ownFileInclusive: Map<string, number>
  /** bytes by the innermost frame of ours on the stack: who called the library that allocated */
  readonly nearestOwn: Map<string, number>
  /** bytes by the innermost package or folder, then the innermost frame of ours above it */
  readonly groupByNearestOwn: Map<string, number>
  /** bytes by the outermost JS frame: what the event loop ran (a socket's data, a timer, a microtask) */
  readonly byEntry: Map<string, number>
  /** bytes with any frame of ours on the stack */
  attributed: number
  /** bytes with a frame of RUNTIME_FILES on the stack (the remember runs' fibers) */
  inRuntime: number
}
export const newTallies = (): Tallies => ({
  total: 0,
  samples: 0,
  byFunction: new Map(),
  byGroup: new Map(),
  byFile: new Map(),
  ownInclusive: new Map(),
  ownFileInclusive: new Map(),
  nearestOwn: new Map(),
  groupByNearestOwn: new Map(),
  byEntry: new Map(),
  attributed: 0,
  inRuntime: 0
})

export const NO_OWN = "(no frame of src/ or layers/ on the stack)"

/** Adds up a profile (after `loadScripts`). Stacks are walked from the root: a path of frames down to each node. */
export const tally = (profile: SamplingProfile, t: Tallies = newTallies()): Tallies => {
  t.samples += profile.samples.length
  const path: Array<Frame> = []
  const visit = (node: ProfileNode) => {
    const frame = frameOf(node.callFrame)
    const isRoot = node.callFrame.functionName === "(root)" && node.callFrame.url === ""
    if (!isRoot) path.push(frame)
    const size = node.selfSize
    if (size > 0 && path.length > 0) {
      t.total += size
      // a builtin's bytes go to the builtin at its caller, and to its caller's package
      let caller = path.length - 1
      while (caller > 0 && path[caller]!.builtin) caller--
      const at = path[caller]!
      bump(t.byFunction, frame.builtin && at !== frame ? `${frame.key} ← ${at.key}` : frame.key, size)
      bump(t.byGroup, at.builtin ? "(builtin)" : at.group, size)
      bump(t.byFile, at.builtin ? "(builtin)" : at.file === "" ? at.key : at.file, size)
      const entry = path.find((f) => f.file !== "") ?? path[0]!
      bump(t.byEntry, entry.key, size)
      const seen = new Set<string>()
      const seenFiles = new Set<string>()
      let nearest: Frame | undefined
      for (let i = path.length - 1; i >= 0; i--) {
        const f = path[i]!
        if (!f.own) continue
        nearest ??= f
        if (!seen.has(f.key)) {
          seen.add(f.key)
          bump(t.ownInclusive, f.key, size)
        }
        if (!seenFiles.has(f.file)) {
          seenFiles.add(f.file)
          bump(t.ownFileInclusive, f.file, size)
        }
      }
      if (nearest !== undefined) t.attributed += size
      if (path.some((f) => f.runtime)) t.inRuntime += size
      bump(t.nearestOwn, nearest?.key ?? NO_OWN, size)
      bump(t.groupByNearestOwn, `${at.builtin ? "(builtin)" : at.group} ← ${nearest?.key ?? "(none of ours)"}`, size)
    }
    for (const child of node.children) visit(child)
    if (!isRoot) path.pop()
  }
  visit(profile.head)
  return t
}

/** Lets the process exit: the inspector session holds it. */
export const closeSession = () => session.disconnect()
