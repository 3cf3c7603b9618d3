/**
 * src/ai/definitions.ts, the agent tools' descriptions and input schemas, is generated: it must
 * be what scripts/aiTools.ts derives from the contract and the MCP tools today.
 */
import { describe, expect, it } from "vitest"
import { aiToolDefinitions } from "../../scripts/aiTools.js"
import { TOOL_DEFINITIONS } from "../../src/ai/definitions.js"

describe("the agent tools' definitions", () => {
  it("are the MCP tools' arguments as derived today (run scripts/generate-ai-tools.ts if not)", () => {
    expect(TOOL_DEFINITIONS).toEqual(aiToolDefinitions())
  })

  it("leave the user and the dataset to the application", () => {
    for (const definition of Object.values(TOOL_DEFINITIONS)) {
      expect(Object.keys(definition.inputSchema.properties)).not.toContain("user_id")
      expect(Object.keys(definition.inputSchema.properties)).not.toContain("dataset")
    }
  })
})
