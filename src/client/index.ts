/**
 * `gligabao/client`: the plain TypeScript client of a gligabao server. Promise-based, fetch only,
 * no Effect (Node 20+, Bun, Deno, browsers). docs/CLIENTS.md.
 */
export * from "./errors.js"
export {
  type FinalRunEventName,
  isFinalRunEvent,
  type ProgressEventData,
  type RunEvent,
  type SseMessage,
  SseParser,
  type StageEventData
} from "./events.js"
export * from "./Gligabao.js"
export type * from "./types.js"
