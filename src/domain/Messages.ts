/**
 * A conversation to remember (`messages` instead of `text`, docs/INGESTION.md): the wire schema,
 * and the transcript it is stored as. Pure.
 *
 * The transcript has one line per message, `[<created_at>] <speaker> (<role>): <content>` (the
 * time only when given), the content's line breaks folded into spaces, and a blank line
 * between messages so that a long conversation is chunked between them. A `user` message's
 * speaker is its `name`, else the request's user_id; an `assistant` message's is its name,
 * else `assistant`; `system` and `tool` messages are spoken by their name, else their role.
 */
import { Schema } from "effect"
import { ArrayWithin, Label, OneOf, optional, required, Rfc3339, Text, utf8Bytes } from "./Wire.js"

export const MESSAGE_ROLES = ["user", "assistant", "system", "tool"] as const
export type MessageRole = (typeof MESSAGE_ROLES)[number]

export const MAX_MESSAGES = 200
/** All the messages' content together, in bytes (a text's limit). */
export const MAX_MESSAGES_BYTES = 1024 * 1024

export const Message = Schema.Struct({
  role: required(OneOf(MESSAGE_ROLES)).annotations({ description: "who wrote it: user, assistant, system or tool" }),
  name: optional(Label()).annotations({
    description: "the speaker's name (a user message without one is the request's user_id)"
  }),
  content: required(Text(MAX_MESSAGES_BYTES)).annotations({ description: "what was said" }),
  created_at: optional(Rfc3339).annotations({
    description: "RFC 3339: when it was said; relative dates in it resolve against this"
  })
}).annotations({ identifier: "Message" })
export type Message = typeof Message.Type

export const Messages = ArrayWithin(Message, {
  notArray: "must be an array of messages",
  min: 1,
  max: MAX_MESSAGES,
  length: (n) =>
    n === 0 ? "must not be empty" : n > MAX_MESSAGES ? `must have at most ${MAX_MESSAGES} messages` : undefined
}).pipe(
  Schema.filter(
    (messages) =>
      messages.reduce((sum, m) => sum + utf8Bytes(m.content), 0) <= MAX_MESSAGES_BYTES ||
      `must hold at most ${MAX_MESSAGES_BYTES} bytes of content in all`
  )
).annotations({
  description: `a conversation instead of text: 1 to ${MAX_MESSAGES} messages, at most 1 MiB of content in all`
})

/** Who spoke a message, as the transcript and the extraction prompt name them. */
export const speakerOf = (message: Message, userId: string): string =>
  message.name ?? (message.role === "user" ? userId : message.role)

/** Where each message is in the transcript (its line), for the artifact's metadata. */
export interface MessagePlace {
  readonly role: MessageRole
  readonly name?: string
  readonly speaker: string
  readonly created_at?: string
  readonly start_offset: number
  readonly end_offset: number
}

export interface Transcript {
  readonly text: string
  readonly places: ReadonlyArray<MessagePlace>
}

const SEPARATOR = "\n\n"

/** The conversation as stored: one line per message, a blank line between them. */
export const transcriptOf = (messages: ReadonlyArray<Message>, userId: string): Transcript => {
  const lines: Array<string> = []
  const places: Array<MessagePlace> = []
  let offset = 0
  for (const message of messages) {
    const speaker = speakerOf(message, userId)
    const time = message.created_at === undefined ? "" : `[${message.created_at}] `
    const line = `${time}${speaker} (${message.role}): ${message.content.trim().replace(/\s*[\r\n]+\s*/g, " ")}`
    places.push({
      role: message.role,
      ...(message.name === undefined ? {} : { name: message.name }),
      speaker,
      ...(message.created_at === undefined ? {} : { created_at: message.created_at }),
      start_offset: offset,
      end_offset: offset + line.length
    })
    lines.push(line)
    offset += line.length + SEPARATOR.length
  }
  return { text: lines.join(SEPARATOR), places }
}

/** The conversation's reference time: its last message's `created_at`, if any has one. */
export const lastMessageTime = (messages: ReadonlyArray<Message>): string | undefined =>
  [...messages].reverse().find((m) => m.created_at !== undefined)?.created_at
