/**
 * Writes src/ai/definitions.ts, the agent tools' descriptions and input schemas:
 * `npx tsx scripts/generate-ai-tools.ts`. Run it after changing a request schema or an MCP
 * argument's text; test/ai/definitions.test.ts fails while the file and the derivation disagree.
 */
import { writeFileSync } from "node:fs"
import { AI_DEFINITIONS_PATH, writeDefinitions } from "./aiTools.js"

writeDefinitions((path, text) => writeFileSync(path, text))
console.log(`wrote ${AI_DEFINITIONS_PATH}`)
