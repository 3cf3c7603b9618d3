/**
 * A remember run's Server-Sent Events (`GET /v1/gb/runs/{id}/events`, docs/INGESTION.md), read
 * from a fetch body by hand: no EventSource, so it works wherever fetch streams a body (Node,
 * Bun, Deno, browsers) and sends the Authorization header, which an EventSource cannot.
 */
import type { RememberRun, RunStage } from "./types.js"

/** A stage's start or end, as the `stage` event carries it. */
export interface StageEventData {
  readonly stage: string
  readonly status: RunStage["status"]
  readonly started_at: string | null
  readonly finished_at: string | null
  readonly duration_ms: number | null
  readonly error: string | null
}

/** A chunked text's progress. */
export interface ProgressEventData {
  readonly stage: string
  readonly chunks_done: number
  readonly chunks_total: number
}

/** The events that end a run's stream: its final status. */
export type FinalRunEventName = "succeeded" | "failed" | "cancelled"

/**
 * One event of a run. `id` is what a reconnect sends back as `Last-Event-ID` (undefined for a
 * final event read from the run itself, when the run had ended before the stream opened).
 */
export type RunEvent =
  | { readonly id: string | undefined; readonly event: "queued" | "started"; readonly data: RememberRun }
  | { readonly id: string | undefined; readonly event: FinalRunEventName; readonly data: RememberRun }
  | { readonly id: string | undefined; readonly event: "stage"; readonly data: StageEventData }
  | { readonly id: string | undefined; readonly event: "progress"; readonly data: ProgressEventData }

export const isFinalRunEvent = (
  e: RunEvent
): e is Extract<RunEvent, { readonly event: FinalRunEventName }> =>
  e.event === "succeeded" || e.event === "failed" || e.event === "cancelled"

/** A message of the stream as the SSE format defines it (fields joined, comments dropped). */
export interface SseMessage {
  readonly id: string | undefined
  readonly event: string
  readonly data: string
  /** a `retry:` field's reconnection delay, in ms */
  readonly retry: number | undefined
}

/**
 * The SSE parser of the HTML standard (section 9.2.6), fed text as it arrives: lines end with
 * CR, LF or CRLF; a blank line dispatches the message; `:` starts a comment.
 */
export class SseParser {
  private buffer = ""
  private data: Array<string> = []
  private event = ""
  private id: string | undefined = undefined
  private retry: number | undefined = undefined
  private sawCr = false

  /** The messages completed by `text`. */
  push(text: string): Array<SseMessage> {
    // a CRLF split across two chunks: the LF was already a line end
    if (this.sawCr && text.startsWith("\n")) text = text.slice(1)
    this.buffer += text
    const out: Array<SseMessage> = []
    let start = 0
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer[i]
      if (c !== "\n" && c !== "\r") continue
      this.line(this.buffer.slice(start, i), out)
      if (c === "\r" && this.buffer[i + 1] === "\n") i++
      start = i + 1
    }
    this.sawCr = this.buffer.endsWith("\r")
    this.buffer = this.buffer.slice(start)
    return out
  }

  private line(line: string, out: Array<SseMessage>): void {
    if (line === "") {
      if (this.data.length > 0 || this.retry !== undefined) {
        out.push({ id: this.id, event: this.event || "message", data: this.data.join("\n"), retry: this.retry })
      }
      this.data = []
      this.event = ""
      this.retry = undefined
      return
    }
    if (line.startsWith(":")) return
    const colon = line.indexOf(":")
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? "" : line.slice(colon + 1)
    if (value.startsWith(" ")) value = value.slice(1)
    switch (field) {
      case "data":
        this.data.push(value)
        break
      case "event":
        this.event = value
        break
      case "id":
        // the last event id persists across messages until another is sent
        if (!value.includes("\0")) this.id = value
        break
      case "retry":
        if (/^\d+$/.test(value)) this.retry = Number(value)
        break
    }
  }
}

const RUN_EVENTS = new Set(["queued", "started", "stage", "progress", "succeeded", "failed", "cancelled"])

/** A message as a run event, or undefined for anything else (a `retry:`-only message, an unknown event). */
export const toRunEvent = (message: SseMessage): RunEvent | undefined => {
  if (!RUN_EVENTS.has(message.event) || message.data === "") return undefined
  return { id: message.id, event: message.event, data: JSON.parse(message.data) } as RunEvent
}
