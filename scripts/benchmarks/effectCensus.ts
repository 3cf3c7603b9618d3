/**
 * Counts the copies Effect's runtime makes of a fiber's FiberRefs and Context (scripts/bench-alloc.ts,
 * issue 39). Every FiberRef change (`setFiberRef` of the fiber runtime: Effect.locally,
 * provideService, withSpan's ParentSpan, withScheduler, annotateLogs, a fork's getFiberRefs
 * stamping the runtime flags) copies the fiber's map of FiberRefs; a change of `currentContext`
 * (provideService, withSpan, a Layer's context) has first copied the Context's map of services.
 * While a census is open, each change is counted by FiberRef (and for the Context by the service
 * whose value changed), with the entries copied (services only for a Context not set before:
 * restoring the previous one at the end of a provideService copies the FiberRefs alone). Not run under the heap sampler: it allocates.
 */
import { Effect, FiberRef } from "effect"

export interface Census {
  /** by FiberRef name; for currentContext, `currentContext: <service keys that changed>` */
  readonly changes: Map<string, { count: number; fiberRefsCopied: number; servicesCopied: number }>
  getFiberRefs: number
}
let census: Census | undefined

/** Contexts seen before: setting one again (a restore when a provideService or span ends) copied no services. */
const seenContexts = new WeakSet<object>()
const names = new Map<unknown, string>(
  Object.entries(FiberRef).filter(([, v]) => v !== null && typeof v === "object").map(([k, v]) => [v, k])
)

/** Patches the fiber runtime's prototype once; counts only while a census is open. */
export const installCensus = () => {
  const proto = Object.getPrototypeOf(Effect.runFork(Effect.void)) as Record<string, (...args: Array<any>) => any>
  const setFiberRef = proto.setFiberRef!
  const getFiberRefs = proto.getFiberRefs!
  proto.setFiberRef = function(this: any, fiberRef: unknown, value: unknown) {
    const c = census
    if (c !== undefined) {
      const locals: Map<unknown, unknown> | undefined = this._fiberRefs?.locals
      let name = names.get(fiberRef) ?? "(a FiberRef of a library or ours)"
      let services = 0
      if (fiberRef === FiberRef.currentContext) {
        const before: Map<string, unknown> = this.getFiberRef(fiberRef).unsafeMap
        const after: Map<string, unknown> = (value as any).unsafeMap
        // a fresh Context: Context.add or merge copied its services
        if (!seenContexts.has(value as object)) services = after.size
        seenContexts.add(value as object)
        seenContexts.add(this.getFiberRef(fiberRef))
        const changed: Array<string> = []
        for (const [k, v] of after) if (before.get(k) !== v) changed.push(k)
        for (const k of before.keys()) if (!after.has(k)) changed.push(`-${k}`)
        name = `currentContext: ${changed.length === 0 ? "(same services)" : changed.sort().join(", ")}`
      }
      const entry = c.changes.get(name) ?? { count: 0, fiberRefsCopied: 0, servicesCopied: 0 }
      entry.count += 1
      entry.fiberRefsCopied += locals?.size ?? 0
      entry.servicesCopied += services
      c.changes.set(name, entry)
    }
    return setFiberRef.call(this, fiberRef, value)
  }
  proto.getFiberRefs = function(this: any) {
    if (census !== undefined) census.getFiberRefs += 1
    return getFiberRefs.call(this)
  }
}

export const startCensus = (): Census => (census = { changes: new Map(), getFiberRefs: 0 })
export const stopCensus = () => void (census = undefined)
