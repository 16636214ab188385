import type { JsonObject } from './command.js';

/**
 * Lenient readers for response bodies. The text renderers should show what
 * the server sent even if a field is missing or renamed; `--json` remains the
 * exact view.
 */

export function objectAt(body: JsonObject, key: string): JsonObject {
  const value = body[key];
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : {};
}

export function listAt(body: JsonObject, key: string): JsonObject[] {
  const value = body[key];
  return Array.isArray(value)
    ? value.filter((item): item is JsonObject => typeof item === 'object' && item !== null && !Array.isArray(item))
    : [];
}
