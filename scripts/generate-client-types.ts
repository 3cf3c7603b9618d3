/**
 * Writes src/client/types.ts, the plain client's types, from the OpenAPI document the server
 * serves: `npx tsx scripts/generate-client-types.ts`. Run it after changing a request or response
 * schema; test/client/types.test.ts fails while the file and the document disagree.
 */
import { writeFileSync } from "node:fs"
import { openApiDocument } from "../src/http/Http.js"
import { CLIENT_TYPES_PATH, clientTypes } from "./clientTypes.js"

writeFileSync(CLIENT_TYPES_PATH, await clientTypes(openApiDocument))
console.log(`wrote ${CLIENT_TYPES_PATH}`)
