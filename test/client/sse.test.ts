/**
 * The plain client's Server-Sent Events parser (src/client/events.ts): the format's rules, and the
 * same messages however the text is cut into chunks (a fetch body arrives in arbitrary pieces).
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { SseParser } from "../../src/client/events.js"

const STREAM = "retry: 3000\n\n" +
  "id: 1:queued\nevent: queued\ndata: {\"id\":1}\n\n" +
  ": keep-alive\n\n" +
  "id: 1:stage\r\nevent: stage\r\ndata: {\"stage\":\r\ndata: \"extract_graph\"}\r\n\r\n" +
  "event: succeeded\rdata:{\"id\":1}\r\r" +
  "data: no end yet"

const EXPECTED = [
  { id: undefined, event: "message", data: "", retry: 3000 },
  { id: "1:queued", event: "queued", data: "{\"id\":1}", retry: undefined },
  { id: "1:stage", event: "stage", data: "{\"stage\":\n\"extract_graph\"}", retry: undefined },
  // the last id carries over to a message without one
  { id: "1:stage", event: "succeeded", data: "{\"id\":1}", retry: undefined }
]

describe("SseParser", () => {
  it("reads fields, comments, CR, LF and CRLF line ends, multi-line data; an unfinished message waits", () => {
    expect(new SseParser().push(STREAM)).toEqual(EXPECTED)
  })

  it("gives the same messages however the stream is cut", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: STREAM.length - 1 }), { maxLength: 20 }), (cuts) => {
        const points = [0, ...[...cuts].sort((a, b) => a - b), STREAM.length]
        const parser = new SseParser()
        const messages = points.slice(1).flatMap((end, i) => parser.push(STREAM.slice(points[i], end)))
        expect(messages).toEqual(EXPECTED)
      }),
      { numRuns: 300 }
    )
  })
})
