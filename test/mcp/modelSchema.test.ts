/** The input schemas a model is shown (src/mcp/modelSchema.ts): types, enums and descriptions, no validation detail. */
import { describe, expect, it } from "vitest"
import { modelSchema } from "../../src/mcp/modelSchema.js"

describe("modelSchema", () => {
  it("keeps types, required, enums, formats and the tool's descriptions; drops validation and null branches", () => {
    expect(modelSchema({
      type: "object",
      required: ["user_id"],
      additionalProperties: false,
      properties: {
        user_id: { type: "string", minLength: 1, maxLength: 256, pattern: "^x$", description: "who" },
        dataset: {
          anyOf: [{ type: "string", maxLength: 128, description: "inner" }, { type: "null" }],
          description: "outer"
        },
        at: { anyOf: [{ type: "string", format: "date-time" }, { type: "null" }], description: "when" },
        kind: { anyOf: [{ type: "string", enum: ["a", "b"] }, { type: "null" }], description: "which" },
        ids: { type: "array", items: { type: "integer", minimum: 1, description: "an id" }, maxItems: 100 },
        either: { anyOf: [{ type: "string" }, { type: "integer", maximum: 3 }], description: "two types" }
      }
    })).toEqual({
      type: "object",
      required: ["user_id"],
      properties: {
        user_id: { type: "string", description: "who" },
        dataset: { type: "string", description: "outer" },
        at: { type: "string", format: "date-time", description: "when" },
        kind: { type: "string", enum: ["a", "b"], description: "which" },
        ids: { type: "array", items: { type: "integer" } },
        either: { anyOf: [{ type: "string" }, { type: "integer" }], description: "two types" }
      }
    })
  })

  it("keeps the descriptions of an array's object properties", () => {
    const items = { type: "object", properties: { role: { type: "string", description: "who spoke", maxLength: 9 } } }
    expect(modelSchema({ type: "object", properties: { messages: { type: "array", items, description: "turns" } } }))
      .toEqual({
        type: "object",
        properties: {
          messages: {
            type: "array",
            items: { type: "object", properties: { role: { type: "string", description: "who spoke" } } },
            description: "turns"
          }
        }
      })
  })
})
