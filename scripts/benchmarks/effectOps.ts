/**
 * Counts the Effect runtime's operations and says whose they are (scripts/bench-ops.ts, issue 39).
 *
 * `OpCounter` is a Supervisor: with RuntimeFlags.OpSupervision on, the fiber runtime calls its
 * `onEffect` before every turn of its run loop (one operation). While a phase is open
 * (`startPhase`), each operation is counted by its kind (`_op`), by the innermost span of its
 * fiber (Effect.fn and withSpan names) and by every span above it. Every `sampleEvery`-th
 * operation the fiber's continuation stack (and beyond it, the stack its fiber was forked from)
 * is walked through the inspector, V8's [[GeneratorLocation]] (where an Effect.gen body is
 * suspended) and [[FunctionLocation]] (where a continuation was written), mapped through tsx's
 * source maps, to the innermost lines of src/ or layers/. A plain function that only builds
 * effects from library combinators leaves no frame: its operations go to the nearest line that
 * does (a `yield*`, a callback of ours). `watchRunLoops` counts run-loop turns of fibers that run
 * without supervision (Effect.runSync, runtimes made elsewhere), whose operations are not seen.
 */
import { Effect, Option, RuntimeFlags, Supervisor, type Tracer } from "effect"
import type { Context, Fiber } from "effect"
import { Session } from "node:inspector"
import { type ParsedScript, sourceLine } from "./sourceLines.js"

/** What each operation (or sampled operation, or fork) is counted by; `sampled` ones are ×sampleEvery estimates. */
export const TALLIES = {
  byKind: { json: "by_kind", sampled: false, head: "_op", title: "Effect operations by kind (`_op`)" },
  bySpan: { json: "by_span", sampled: false, head: "span", title: "by innermost span" },
  inclusive: {
    json: "by_span_inclusive",
    sampled: false,
    head: "span",
    title: "by span, inclusive: operations with that span anywhere above them"
  },
  bySource: {
    json: "by_source_line",
    sampled: true,
    head: "source line",
    title: "by the innermost line of src/ or layers/ on the fiber's stack (its fork site's beyond)"
  },
  bySourceOutsideSql: {
    json: "by_source_line_outside_sql_runner",
    sampled: true,
    head: "source line",
    title: "by the innermost line outside the SQL runner (layers/sql/sqliteClient.ts): who runs the statements"
  },
  byPath: {
    json: "by_source_path",
    sampled: true,
    head: "call path",
    title: "by the innermost 3 lines of src/ or layers/, innermost first"
  },
  bySpanSource: {
    json: "by_span_and_source_line",
    sampled: true,
    head: "innermost span @ innermost line of ours",
    title: "by innermost span and innermost line of src/ or layers/ together (splits a coarse span)"
  },
  byInnermost: {
    json: "by_innermost_file",
    sampled: true,
    head: "file",
    title: "by the file of the innermost frame of all"
  },
  forksBySpan: {
    json: "forks_by_span",
    sampled: false,
    head: "span",
    title: "fibers forked, by the span they were forked in"
  }
} as const
export type Tally = keyof typeof TALLIES
export const TALLY_NAMES = Object.keys(TALLIES) as Array<Tally>

export interface Phase {
  /** every how many operations a stack is sampled */
  readonly sampleEvery: number
  ops: number
  forks: number
  supervisedTurns: number
  /** run-loop turns of fibers without OpSupervision (their operations are not seen) */
  unsupervisedTurns: number
  readonly unsupervisedFibers: Set<unknown>
  samples: number
  sampleMs: number
  readonly t: Record<Tally, Map<string, number>>
}
export const newPhase = (sampleEvery: number): Phase => ({
  sampleEvery,
  ops: 0,
  forks: 0,
  supervisedTurns: 0,
  unsupervisedTurns: 0,
  unsupervisedFibers: new Set(),
  samples: 0,
  sampleMs: 0,
  t: Object.fromEntries(TALLY_NAMES.map((k) => [k, new Map()])) as Record<Tally, Map<string, number>>
})
export const bump = (m: Map<string, number>, k: string, n = 1) => m.set(k, (m.get(k) ?? 0) + n)
let phase: Phase | undefined
/** Counts from now on into a new phase, until `stopPhase`. */
export const startPhase = (sampleEvery: number): Phase => (phase = newPhase(sampleEvery))
export const stopPhase = () => void (phase = undefined)

const NO_SPAN = "(no span)"
const NO_FRAME = "(no frame of src/ or layers/)"
const packageOf = (file: string) => /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)?.[1] ?? file
const spanName = (span: Tracer.AnySpan | undefined) =>
  span === undefined ? NO_SPAN : span._tag === "Span" ? span.name : "(external span)"

// ---- source locations through the inspector ----

const session = new Session()
session.connect()
/** the same-thread inspector answers synchronously */
const post = <A = any>(method: string, params?: object): A => {
  let out: { error: Error | null; result: A } | undefined
  session.post(method, params ?? {}, (error, result) => void (out = { error, result: result as A }))
  if (out === undefined) throw new Error(`the inspector did not answer ${method} synchronously`)
  if (out.error !== null) throw out.error
  return out.result
}
const scripts = new Map<string, ParsedScript>()
session.on(
  "Debugger.scriptParsed",
  ({ params }) => scripts.set(params.scriptId, { url: params.url, sourceMapURL: params.sourceMapURL ?? "" })
)
post("Debugger.enable")

interface Where {
  readonly file: string
  readonly line: number
  readonly own: boolean
}

/** Where a function is defined, or where a generator is suspended (source-mapped), via the inspector. */
const locate = (value: object): Where | undefined => {
  ;(globalThis as any).__benchOpsProbe = value
  const { result } = post<{ result: { objectId?: string } }>("Runtime.evaluate", {
    expression: "globalThis.__benchOpsProbe",
    objectGroup: "bench-ops"
  })
  if (result.objectId === undefined) return undefined
  const props = post<{ internalProperties?: Array<{ name: string; value?: { value?: any } }> }>(
    "Runtime.getProperties",
    { objectId: result.objectId, ownProperties: true }
  )
  const loc = props.internalProperties?.find((p) =>
    p.name === "[[GeneratorLocation]]" || p.name === "[[FunctionLocation]]"
  )
    ?.value?.value as { scriptId: string; lineNumber: number; columnNumber: number } | undefined
  if (loc === undefined) return undefined
  const script = scripts.get(loc.scriptId)
  if (script === undefined || script.url === "") return undefined
  const { file, line } = sourceLine(script.url, script, loc.lineNumber, loc.columnNumber)
  return { file, line, own: !file.startsWith("node_modules") && /^(src|layers)\//.test(file) }
}

/** The code objects of an operation or a continuation frame: its functions, or its generator. */
const codeOf = (op: any): Array<object> => {
  if (op === null || typeof op !== "object") return []
  const out: Array<object> = []
  // Effect.suspend's thunk (a statement's or a Deferred's commit is its class's method)
  if (op._op === "Commit" && Object.hasOwn(op, "commit") && typeof op.commit === "function") out.push(op.commit)
  for (const k of ["effect_instruction_i2", "effect_instruction_i1", "effect_instruction_i0"]) {
    const v = op[k]
    if (typeof v === "function") out.push(v)
    else if (k === "effect_instruction_i0" && op._op === "Iterator" && v !== null && typeof v === "object") out.push(v)
  }
  return out
}

const MAX_FRAMES = 400
const PATH_DEPTH = 3
let probes = 0
/** functions keep their location (generators move: they are looked up each time) */
const functionLocations = new WeakMap<object, Where | null>()
const locateCached = (code: object): Where | undefined => {
  if (typeof code !== "function") return locate(code)
  let where = functionLocations.get(code)
  if (where === undefined) {
    where = locate(code) ?? null
    functionLocations.set(code, where)
  }
  return where ?? undefined
}

/**
 * Where each fiber was forked: its parent, and the parent's continuation stack at that moment,
 * so that a forked fiber's operations are traced on through the code that forked it.
 */
interface ForkSite {
  readonly parent: object | undefined
  readonly stack: ReadonlyArray<unknown>
}
const forkSites = new WeakMap<object, ForkSite>()

/** A fiber's frames from the innermost out: its own stack, then each ancestor's at the fork. */
function* framesOf(fiber: any, effect: unknown): Generator<unknown> {
  yield effect
  const own: Array<unknown> = Array.isArray(fiber._stack) ? fiber._stack : []
  for (let i = own.length - 1; i >= 0; i--) yield own[i]
  for (let site = forkSites.get(fiber); site !== undefined; site = site.parent && forkSites.get(site.parent)) {
    for (let i = site.stack.length - 1; i >= 0; i--) yield site.stack[i]
    if (site.parent === undefined) break
  }
}

/**
 * The operation's own code, then the fiber's continuation stacks from the top: the innermost
 * frame of all, and the first PATH_DEPTH distinct lines of src/ or layers/.
 */
const sample = (p: Phase, fiber: any, effect: unknown) => {
  const t0 = performance.now()
  let innermost: Where | undefined
  const path: Array<string> = []
  let walked = 0
  outer: for (const frame of framesOf(fiber, effect)) {
    if (++walked > MAX_FRAMES) break
    for (const code of codeOf(frame)) {
      const where = locateCached(code)
      if (where === undefined) continue
      innermost ??= where
      if (!where.own) continue
      const line = `${where.file}:${where.line}`
      if (path[path.length - 1] !== line) path.push(line)
      if (path.length >= PATH_DEPTH) break outer
    }
  }
  const weight = p.sampleEvery
  // without a frame of ours (the HTTP server's own fibers, say): the innermost package instead
  const none = `${NO_FRAME}, innermost ${innermost === undefined ? "unknown" : packageOf(innermost.file)}`
  bump(p.t.bySource, path[0] ?? none, weight)
  bump(p.t.byPath, path.length === 0 ? none : path.join(" ← "), weight)
  bump(p.t.bySpanSource, `${spanName(fiber.currentSpan)} @ ${path[0] ?? none}`, weight)
  // the SQL runner is called from everywhere: its callers, too
  const outside = path.find((l) => !l.startsWith("layers/sql/sqliteClient.ts"))
  bump(p.t.bySourceOutsideSql, outside ?? none, weight)
  bump(p.t.byInnermost, innermost === undefined ? "(unknown)" : innermost.file, weight)
  p.samples += 1
  if (++probes % 500 === 0) post("Runtime.releaseObjectGroup", { objectGroup: "bench-ops" })
  p.sampleMs += performance.now() - t0
}
// ---- the supervisor ----

/** Effect.suspend (so every Effect.gen and Effect.fn call) and Effect's `custom` are Commits of EffectPrimitive. */
const commitKind = (effect: any) => {
  const name: string = effect?.constructor?.name ?? "?"
  return name === "EffectPrimitive" ? "Commit: suspend (Effect.suspend, each Effect.gen/fn call)" : `Commit: ${name}`
}

export class OpCounter extends Supervisor.AbstractSupervisor<void> {
  value = Effect.void
  private countdown = 1
  override onStart<A, E, R>(
    context: Context.Context<R>,
    _effect: Effect.Effect<A, E, R>,
    parent: Option.Option<Fiber.RuntimeFiber<any, any>>,
    fiber: Fiber.RuntimeFiber<A, E>
  ) {
    const from = Option.getOrUndefined(parent) as any
    if (from !== undefined) {
      forkSites.set(fiber, { parent: from, stack: Array.isArray(from._stack) ? from._stack.slice() : [] })
    }
    if (phase === undefined) return
    phase.forks += 1
    const span = (context as any).unsafeMap?.get("effect/ParentSpan") as Tracer.AnySpan | undefined
    bump(phase.t.forksBySpan, spanName(span))
  }
  override onEffect<A, E>(fiber: Fiber.RuntimeFiber<A, E>, effect: Effect.Effect<any, any, any>) {
    const p = phase
    if (p === undefined) return
    p.ops += 1
    const kind = String((effect as any)?._op)
    // a Commit is an Effectable object (a SQL statement, a Deferred, a Ref...): which class
    bump(p.t.byKind, kind === "Commit" ? commitKind(effect) : kind)
    const span = fiber.currentSpan
    bump(p.t.bySpan, spanName(span))
    if (span === undefined) bump(p.t.inclusive, NO_SPAN)
    const seen = new Set<string>()
    for (let s: Tracer.AnySpan | undefined = span; s !== undefined;) {
      const name = spanName(s)
      if (!seen.has(name)) {
        seen.add(name)
        bump(p.t.inclusive, name)
      }
      s = s._tag === "Span" ? Option.getOrUndefined(s.parent) : undefined
    }
    if (--this.countdown === 0) {
      this.countdown = p.sampleEvery
      sample(p, fiber, effect)
    }
  }
}

/** Counts run-loop turns of every fiber, telling apart those that run without supervision. */
export const watchRunLoops = () => {
  const probe = Effect.runFork(Effect.void)
  const proto = Object.getPrototypeOf(probe) as { runLoop: (this: any, e: unknown) => unknown }
  const runLoop = proto.runLoop
  const bit = RuntimeFlags.OpSupervision as unknown as number
  proto.runLoop = function(this: any, effect: unknown) {
    const p = phase
    if (p !== undefined) {
      if ((this.currentRuntimeFlags & bit) === 0) {
        p.unsupervisedTurns += 1
        p.unsupervisedFibers.add(this)
      } else {
        p.supervisedTurns += 1
      }
    }
    return runLoop.call(this, effect)
  }
}

/** Lets the process exit: the inspector session holds it. */
export const closeInspector = () => session.disconnect()
