/**
 * Every method of a service, each call in a span named `<service>.<method>`: a trace then shows
 * one read from the handler down to the SQL (docs/ARCHITECTURE.md). No attribute is added, so a
 * span carries no query text or other user data.
 */
import { Context, Effect } from "effect"

/**
 * Whether services built in its scope wrap their methods in spans: the app sets it false when it
 * exports no traces (issue 39: each span copies the fiber's whole context), as it runs SQL
 * statements without their spans then. Default true: a library user's traces keep them.
 */
export class ServiceSpans extends Context.Reference<ServiceSpans>()("gligabao/ServiceSpans", {
  defaultValue: () => true
}) {}

/** `methods` with a span each, or as they are when `spans` is false. */
export const traced = <S extends object>(service: string, methods: S, spans = true): S => {
  if (!spans) return methods
  const out: Record<string, unknown> = {}
  for (const [name, method] of Object.entries(methods)) {
    out[name] = typeof method !== "function" ? method : (...args: Array<unknown>) => {
      const result: unknown = method(...args)
      return Effect.isEffect(result) ? Effect.withSpan(result, `${service}.${name}`) : result
    }
  }
  return out as S
}
