import { z } from 'zod'
import { TOOL_ID } from '../../core/define-tool.js'

/*
 * The operator's bundles (the upstreams file's `bundles`): curated tool sets, each served at
 * its own addresses (`/mcp/{name}`, `/bundles/{name}/...`). One declaration, several names: a
 * bundle holds the catalog's tools, never copies of them.
 */

/** A bundle's name is a path segment of its addresses: lowercase, digits, `_` and `-`. */
const BUNDLE_NAME = /^[a-z][a-z0-9_-]{0,63}$/

/** Ids or globs of them, as the file's `tools` and `limits` take them. */
const TOOL_PATTERN = /^[a-z0-9_*?]+$/

const AliasSchema = z.object({
  /** The tool's name inside the bundle (a tool id's shape, so every face and provider takes it). */
  name: z.string().regex(TOOL_ID, `a tool name matching ${String(TOOL_ID)}`).optional(),
  description: z.string().trim().min(1).max(4096).optional(),
}).strict().refine(alias => alias.name !== undefined || alias.description !== undefined, 'an alias gives a name, a description, or both')

const BundleDeclarationSchema = z.object({
  description: z.string().trim().min(1).max(4096),
  /** Tool ids and globs over local and upstream tools; each must match one when checked. */
  tools: z.array(z.string().regex(TOOL_PATTERN, 'a tool id or a glob of them (lowercase letters, digits, _, * and ?)')).min(1).max(1_000),
  /** By tool id: the name and description the bundle shows instead of the tool's own. */
  aliases: z.record(z.string().regex(TOOL_ID, 'a tool id'), AliasSchema).default({}),
  /** Scopes a principal must all hold to use the bundle. */
  scopes: z.array(z.string().min(1).max(256)).max(64).optional(),
  /** A CEL expression over `principal` (`id`, `scopes`) that must hold to use the bundle. */
  allow: z.union([z.boolean(), z.string().min(1).max(4096)]).optional(),
  /** Its MCP endpoint lists three tools (search, describe, call) instead of every tool. */
  discovery: z.boolean().default(false),
}).strict()

export type BundleDeclaration = z.output<typeof BundleDeclarationSchema>

export const BundlesSchema = z.record(z.string().regex(BUNDLE_NAME, 'a bundle name: a lowercase letter, then lowercase letters, digits, _ or - (a path segment)'), BundleDeclarationSchema).default({})
