/**
 * Every method of a service, each call in a span named `<service>.<method>`: a trace then shows
 * one read from the handler down to the SQL (docs/ARCHITECTURE.md). No attribute is added, so a
 * span carries no query text or other user data.
 */
import { Effect } from "effect"

export const traced = <S extends object>(service: string, methods: S): S => {
  const out: Record<string, unknown> = {}
  for (const [name, method] of Object.entries(methods)) {
    out[name] = typeof method !== "function" ? method : (...args: Array<unknown>) => {
      const result: unknown = method(...args)
      return Effect.isEffect(result) ? Effect.withSpan(result, `${service}.${name}`) : result
    }
  }
  return out as S
}
