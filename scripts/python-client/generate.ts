/**
 * The Python client's types (clients/python/gligabao/_types.py) from the served OpenAPI document:
 * one dataclass per object schema the client's operations reach (components under their names,
 * inline objects named after where they sit), their JSON fields for gligabao/_wire.py, and the
 * operations' methods, paths and classes. A pure function of the document, so a test can compare
 * its output with the committed file.
 */
import { CLIENT_OPERATIONS, type ClientOperation, NOT_IN_CLIENT } from "./operations.js"

type Json = any

interface PyField {
  readonly key: string
  readonly attr: string
  readonly annotation: string
  readonly codec: string
  readonly required: boolean
  readonly description: string | undefined
}

interface PyClass {
  readonly name: string
  readonly description: string | undefined
  /** the schema with descriptions and examples left out: two uses of one name must agree */
  readonly shape: string
  readonly fields: Array<PyField>
}

/** A Python type annotation, and the codec (gligabao/_wire.py) that reads it. */
interface Typed {
  readonly annotation: string
  readonly codec: string
  readonly nullable: boolean
}

const KEYWORDS = new Set(
  ("False None True and as assert async await break class continue def del elif else except finally for from " +
    "global if import in is lambda nonlocal not or pass raise return try while with yield").split(" ")
)
/** Attributes of every generated class (gligabao/_wire.py, Wire). */
const RESERVED = new Set(["extra_fields", "to_json", "from_json", "required_keys"])

const METHODS = ["get", "put", "post", "delete", "patch"] as const

export const pascal = (name: string): string =>
  name.split(/[^A-Za-z0-9]+/).filter((w) => w !== "").map((w) => w[0]!.toUpperCase() + w.slice(1)).join("")

/** A Python string literal: JSON's escapes are Python's too. */
const str = (s: string): string => JSON.stringify(s)

/** What makes two schemas the same class: no descriptions, examples or titles (property names stay). */
const shapeOf = (schema: Json): string => JSON.stringify(bare(schema))

const NOTES = new Set(["description", "examples", "title", "additionalProperties"])
const bare = (node: Json, inProperties = false): Json => {
  if (Array.isArray(node)) return node.map((n) => bare(n))
  if (node === null || typeof node !== "object") return node
  return Object.fromEntries(
    Object.entries(node).filter(([key]) => inProperties || !NOTES.has(key)).map((
      [key, value]
    ) => [key, bare(value, !inProperties && key === "properties")])
  )
}

const literal = (value: unknown): string => {
  if (typeof value === "string") return str(value)
  if (typeof value === "boolean") return value ? "True" : "False"
  return value === null ? "None" : String(value)
}

/**
 * How a class is named: "params" exactly as the operations table says; "named" (a body or an
 * answer) as the component of the same shape if there is one, else as the table says; "derived"
 * (an object inside another, named after where it sits) also as an earlier class of the same shape.
 */
type Naming = "params" | "named" | "derived"

const ANY: Typed = { annotation: "Any", codec: "ANY", nullable: false }

class Generator {
  readonly classes = new Map<string, PyClass>()
  /** component schemas by their class, to reuse one for an inline schema of the same shape */
  private readonly componentShapes = new Map<string, string>()
  /** the first class of each shape, for inline objects of the same shape elsewhere */
  private readonly inlineShapes = new Map<string, string>()

  constructor(readonly doc: Json) {
    for (const [name, schema] of Object.entries<Json>(doc.components?.schemas ?? {})) {
      if (isClass(schema)) this.componentShapes.set(shapeOf(schema), name)
    }
  }

  private component(ref: string): { name: string; schema: Json } {
    const name = ref.replace("#/components/schemas/", "")
    const schema = this.doc.components?.schemas?.[name]
    if (schema === undefined) throw new Error(`no schema at ${ref}`)
    return { name, schema }
  }

  /** The type of `schema`, defining a class named `name` for an object with properties. */
  typeOf(schema: Json, name: string, naming: Naming = "derived"): Typed {
    if (schema === undefined || schema === null || schema === true || typeof schema !== "object") return ANY
    if (schema.$ref !== undefined) {
      const { name: target, schema: resolved } = this.component(schema.$ref)
      return this.typeOf(resolved, target)
    }
    if (Array.isArray(schema.allOf) && schema.allOf.length === 1) return this.typeOf(schema.allOf[0], name)
    if (Array.isArray(schema.anyOf) && schema.type === undefined) return this.union(schema.anyOf, name)
    if (Array.isArray(schema.type)) return this.union(schema.type.map((type: string) => ({ type })), name)
    if (Array.isArray(schema.enum)) {
      return { annotation: `Literal[${schema.enum.map(literal).join(", ")}]`, codec: "ANY", nullable: false }
    }
    switch (schema.type) {
      case "string":
        return schema.contentMediaType === "application/json"
          ? { annotation: "Union[str, Dict[str, Any]]", codec: "ANY", nullable: false }
          : { annotation: "str", codec: "ANY", nullable: false }
      case "number":
        return { annotation: "float", codec: "ANY", nullable: false }
      case "integer":
        return { annotation: "int", codec: "ANY", nullable: false }
      case "boolean":
        return { annotation: "bool", codec: "ANY", nullable: false }
      case "null":
        return { annotation: "None", codec: "ANY", nullable: true }
      case "array": {
        if (Array.isArray(schema.prefixItems)) {
          const members = this.union(schema.prefixItems, `${name}Item`)
          return { annotation: `List[${members.annotation}]`, codec: "ANY", nullable: false }
        }
        const item = this.typeOf(schema.items, `${name}Item`)
        return {
          annotation: `List[${item.annotation}]`,
          codec: item.codec === "ANY" ? "ANY" : `_list(${item.codec})`,
          nullable: false
        }
      }
      case "object": {
        if (isClass(schema)) return this.classType(schema, name, naming)
        const values = schema.additionalProperties
        if (values === undefined || values === true || values === false || Object.keys(values).length === 0) {
          return { annotation: "Dict[str, Any]", codec: "ANY", nullable: false }
        }
        const value = this.typeOf(values, `${name}Value`)
        return {
          annotation: `Dict[str, ${value.annotation}]`,
          codec: value.codec === "ANY" ? "ANY" : `_dict(${value.codec})`,
          nullable: false
        }
      }
      default:
        return ANY
    }
  }

  private union(members: Array<Json>, name: string): Typed {
    // nested unions (anyOf in anyOf) are one union
    const flat = members.flatMap((m) => (Array.isArray(m?.anyOf) && m.type === undefined ? m.anyOf : [m]))
    const nonNull = flat.filter((m) => m?.type !== "null")
    // one inline object among the members takes the name; several are numbered
    const objects = nonNull.filter(isClass).length
    const typed = nonNull.map((m, i) => this.typeOf(m, objects <= 1 ? name : `${name}${i + 1}`))
    const nullable = typed.length < flat.length || typed.some((t) => t.nullable)
    const annotations = [...new Set(typed.map((t) => t.annotation))]
    const classes = typed.filter((t) => t.codec.startsWith("_obj(")).map((t) => t.codec.slice(5, -1))
    const single = typed.length === 1 ? typed[0]! : undefined
    const inner = annotations.length === 0
      ? "Any"
      : annotations.length === 1
      ? annotations[0]!
      : `Union[${annotations.join(", ")}]`
    return {
      annotation: nullable && inner !== "Any" ? `Optional[${inner}]` : inner,
      codec: single !== undefined ? single.codec : classes.length > 0 ? `_one(${classes.join(", ")})` : "ANY",
      nullable
    }
  }

  /**
   * Defines (once) the class for an object schema with properties: see `Naming`.
   */
  classType(schema: Json, name: string, naming: Naming = "derived"): Typed {
    const shape = shapeOf(schema)
    // a component keeps its name; an inline object of a component's shape is that component
    const own = this.doc.components?.schemas?.[name]
    const className = (own !== undefined && shapeOf(own) === shape) || naming === "params"
      ? name
      : this.componentShapes.get(shape) ?? (naming === "named" ? name : this.inlineShapes.get(shape) ?? name)
    const existing = this.classes.get(className)
    if (existing !== undefined) {
      if (existing.shape !== shape) throw new Error(`two different schemas would be the class ${className}`)
      return { annotation: className, codec: `_obj(${className})`, nullable: false }
    }
    const fields: Array<PyField> = []
    const cls: PyClass = { name: className, description: schema.description, shape, fields }
    this.classes.set(className, cls)
    if (!this.inlineShapes.has(shape)) this.inlineShapes.set(shape, className)
    const required = new Set<string>(schema.required ?? [])
    for (const [key, property] of Object.entries<Json>(schema.properties)) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new Error(`${className}.${key}: not a Python name`)
      const attr = KEYWORDS.has(key) ? `${key}_` : key
      if (RESERVED.has(attr)) throw new Error(`${className}.${key}: the name of a Wire attribute`)
      const typed = this.typeOf(property, `${className}${pascal(key)}`)
      fields.push({
        key,
        attr,
        annotation: typed.annotation,
        codec: typed.codec,
        required: required.has(key),
        description: property?.description ?? memberDescription(property)
      })
    }
    return { annotation: className, codec: `_obj(${className})`, nullable: false }
  }
}

const isClass = (schema: Json): boolean =>
  schema?.type === "object" && schema.properties !== undefined && Object.keys(schema.properties).length > 0

/** A nullable property's description, from its non-null member. */
const memberDescription = (property: Json): string | undefined => {
  const members: Array<Json> = property?.anyOf ?? []
  return members.find((m) => m?.description !== undefined)?.description
}

interface PlacedOperation {
  readonly id: string
  readonly http: string
  readonly path: string
  readonly spec: ClientOperation
  readonly op: Json
}

const operationsOf = (doc: Json): Array<PlacedOperation> => {
  const placed: Array<PlacedOperation> = []
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const http of METHODS) {
      const op = item[http]
      if (op === undefined) continue
      const id: string = op.operationId
      const spec = CLIENT_OPERATIONS[id]
      if (spec !== undefined) placed.push({ id, http: http.toUpperCase(), path, spec, op })
      else if (!NOT_IN_CLIENT.some((p) => (typeof p === "string" ? p === id : p.test(id)))) {
        throw new Error(
          `${id} (${http.toUpperCase()} ${path}) is neither in the Python client nor left out: ` +
            "place it in scripts/python-client/operations.ts"
        )
      }
    }
  }
  const missing = Object.keys(CLIENT_OPERATIONS).filter((id) => !placed.some((p) => p.id === id))
  if (missing.length > 0) throw new Error(`the document has no operation ${missing.join(", ")}`)
  // the table's order, so the file reads in the client's order whatever the document's
  const order = Object.keys(CLIENT_OPERATIONS)
  return placed.sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id))
}

const emitClass = (cls: PyClass): Array<string> => {
  const ordered = [...cls.fields.filter((f) => f.required), ...cls.fields.filter((f) => !f.required)]
  const lines = ["", "", "@dataclass", `class ${cls.name}(Wire):`]
  if (cls.description !== undefined) lines.push(`    ${str(cls.description)}`, "")
  for (const f of ordered) {
    const optional = f.annotation === "Any" || f.annotation.startsWith("Optional[")
      ? f.annotation
      : `Optional[${f.annotation}]`
    lines.push(f.required ? `    ${f.attr}: ${f.annotation}` : `    ${f.attr}: ${optional} = None`)
    if (f.description !== undefined) lines.push(`    ${str(f.description)}`)
  }
  lines.push("    extra_fields: Dict[str, Any] = field(default_factory=dict, repr=False)")
  lines.push(`    "fields the server sent that this version does not know; sent as they are"`)
  return lines
}

const emitWire = (cls: PyClass): Array<string> => [
  `${cls.name}.__wire__ = (`,
  ...cls.fields.map((f) => {
    const args = [str(f.key)]
    if (f.codec !== "ANY") args.push(f.codec)
    if (f.required) args.push("required=True")
    if (f.attr !== f.key) args.push(`attr=${str(f.attr)}`)
    return `    _F(${args.join(", ")}),`
  }),
  ")"
]

/** `_types.py` for the document. */
export const pythonTypes = (doc: Json): string => {
  const gen = new Generator(doc)
  const operations: Array<string> = []
  for (const { http, op, path, spec } of operationsOf(doc)) {
    const base = pascal(spec.method)
    const query = (op.parameters ?? []).filter((p: Json) => p.in === "query")
    const params = query.length === 0 ? undefined : gen.classType(
      {
        type: "object",
        required: query.filter((p: Json) => p.required === true).map((p: Json) => p.name),
        properties: Object.fromEntries(query.map((p: Json) => [p.name, p.schema]))
      },
      spec.params ?? `${base}Params`,
      "params"
    ).annotation
    const bodySchema = op.requestBody?.content?.["application/json"]?.schema
    const body = bodySchema === undefined
      ? undefined
      : gen.typeOf(bodySchema, spec.body ?? `${base}Request`, "named").annotation
    const responses: Array<string> = []
    for (const [status, response] of Object.entries<Json>(op.responses ?? {})) {
      if (!/^[23]\d\d$/.test(status)) continue
      const schema = response.content?.["application/json"]?.schema
      const name = spec.responses?.[status] ?? `${base}Response${status === "200" ? "" : status}`
      responses.push(`${status}: ${schema === undefined ? "ANY" : gen.typeOf(schema, name, "named").codec}`)
    }
    operations.push(
      `    ${str(spec.method)}: Operation(`,
      `        ${str(http)},`,
      `        ${str(path)},`,
      ...(params === undefined ? [] : [`        params=${params},`]),
      ...(body === undefined ? [] : [`        body=${body},`]),
      `        responses={${responses.join(", ")}},`,
      "    ),"
    )
  }
  const classes = [...gen.classes.values()]
  return [
    `# Generated by scripts/generate-python-client.ts from the OpenAPI document that gligabao ${doc.info.version}`,
    "# serves at /openapi.json. Do not edit: regenerate with",
    "#",
    "#     npx tsx scripts/generate-python-client.ts",
    "#",
    "# test/clients/python.test.ts fails when this file and the served document disagree.",
    "# ruff: noqa",
    "",
    "from __future__ import annotations",
    "",
    "from dataclasses import dataclass, field",
    "from typing import Any, Dict, List, Literal, Optional, Union",
    "",
    "from ._wire import ANY, DictOf as _dict, Field as _F, ListOf as _list, Obj as _obj, OneOf as _one, Operation, Wire",
    "",
    `API_VERSION = ${str(doc.info.version)}`,
    `"the version of gligabao whose document this file was generated from"`,
    ...classes.flatMap(emitClass),
    "",
    "",
    "# The JSON fields of each class, set once every class exists (a field may name a later class).",
    ...classes.flatMap(emitWire),
    "",
    "# The endpoints the client calls: method, path, query parameters, body, and the classes of the answers by status.",
    "OPERATIONS: Dict[str, Operation] = {",
    ...operations,
    "}",
    "",
    "__all__ = [",
    `    "API_VERSION",`,
    ...classes.map((c) => `    ${str(c.name)},`),
    "]",
    ""
  ].join("\n")
}
