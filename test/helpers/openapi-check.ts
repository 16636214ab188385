/**
 * Holds a v1 response to the OpenAPI document the server generates: its
 * status must be one the operation declares (or, for a path or method the
 * API does not serve, the document's NotFound or MethodNotAllowed), its
 * body must match the declared schema (ajv, JSON Schema 2020-12, with
 * formats), every declared required header must be present, and every
 * header it carries must be declared, with a value its schema accepts. The
 * test helpers call it on every response the customer API v1 sends them,
 * so the document cannot drift from the server.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { buildOpenApi } from '../../src/http/v1/openapi.js';
import { VERSION } from '../../src/platform/version.js';

/** The load balancer's health paths on the customer port (README, "readyz"): the operator's, not the customer API's. */
const HEALTH_PATHS = new Set(['/healthz', '/readyz']);

/** Headers every HTTP/1.1 response may carry, whatever the API: not the document's to declare. */
const TRANSPORT_HEADERS = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding', 'uwebsockets']);

interface HeaderObject {
  required?: boolean;
  schema: Record<string, unknown>;
}
interface ResponseObject {
  headers?: Record<string, { $ref: string }>;
  content?: { 'application/json': { schema: unknown } };
}
interface Document {
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
  components: { headers: Record<string, HeaderObject>; responses: Record<string, ResponseObject>; schemas: Record<string, unknown> };
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

let checker: ((method: string, url: string, status: number, headers: Headers, text: string) => string[]) | null = null;

function templateRegex(template: string): RegExp {
  const escaped = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+');
  return new RegExp(`^${escaped}$`);
}

/** The generated document, and ajv validators of its schemas (each compiled once), whose `$ref`s resolve into its components. */
function loadDocument<D extends Document>(): { doc: D; validator: (schema: unknown) => ValidateFunction } {
  const doc = JSON.parse(JSON.stringify(buildOpenApi(VERSION))) as D;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const validators = new Map<unknown, ValidateFunction>();
  const validator = (schema: unknown): ValidateFunction => {
    let v = validators.get(schema);
    if (v === undefined) {
      v = ajv.compile({ ...(schema as object), components: { schemas: doc.components.schemas } });
      validators.set(schema, v);
    }
    return v;
  };
  return { doc, validator };
}

function build(): typeof checker {
  const { doc, validator } = loadDocument<Document>();
  const paths = Object.entries(doc.paths).map(([template, item]) => ({ template, item, regex: templateRegex(template) }));
  return (method, url, status, headers, text) => {
    const path = url.split('?')[0]!;
    if (HEALTH_PATHS.has(path)) return [];
    const found = paths.find((p) => p.regex.test(path));
    const op = found?.item[method.toLowerCase()];
    const where = `${method} ${path} → ${status}`;
    let response: ResponseObject | undefined;
    if (found === undefined) response = status === 404 ? doc.components.responses['NotFound'] : undefined;
    else if (op === undefined) response = status === 405 ? doc.components.responses['MethodNotAllowed'] : undefined;
    else response = op.responses[String(status)];
    if (response === undefined) return [`${where}: the document declares no such status for this ${op === undefined ? 'request' : 'operation'}`];
    return [...checkHeaders(where, response, headers, doc, validator), ...checkBody(where, method, response, text, validator)];
  };
}

function checkHeaders(where: string, response: ResponseObject, headers: Headers, doc: Document, validator: (s: unknown) => ValidateFunction): string[] {
  const problems: string[] = [];
  const declared = new Map<string, HeaderObject>();
  for (const [name, ref] of Object.entries(response.headers ?? {})) {
    declared.set(name.toLowerCase(), doc.components.headers[ref.$ref.split('/').pop()!]!);
  }
  for (const [name, header] of declared) if (header.required === true && !headers.has(name)) problems.push(`${where}: required header ${name} is missing`);
  headers.forEach((value, name) => {
    if (TRANSPORT_HEADERS.has(name)) return;
    const header = declared.get(name);
    if (header === undefined) return problems.push(`${where}: header ${name} is not declared for this response`);
    const typed = header.schema['type'] === 'integer' ? (/^-?[0-9]+$/.test(value) ? Number(value) : value) : value;
    const check = validator(header.schema);
    if (!check(typed)) problems.push(`${where}: header ${name}: ${JSON.stringify(value)} ${ajvText(check)}`);
  });
  return problems;
}

function checkBody(where: string, method: string, response: ResponseObject, text: string, validator: (s: unknown) => ValidateFunction): string[] {
  const schema = response.content?.['application/json'].schema;
  if (method.toUpperCase() === 'HEAD') return text === '' ? [] : [`${where}: a HEAD answer has a body`];
  if (schema === undefined) return text === '' ? [] : [`${where}: the document declares no body, the server sent ${text.slice(0, 200)}`];
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [`${where}: the body is not JSON: ${text.slice(0, 200)}`];
  }
  const check = validator(schema);
  return check(body) ? [] : [`${where}: the body ${text.slice(0, 300)} ${ajvText(check)}`];
}

function ajvText(check: ValidateFunction): string {
  return (check.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`).join('; ');
}

interface WebhookOperation {
  post: { parameters: { name: string; required?: boolean; schema: unknown }[]; requestBody: ResponseObject };
}

let webhookChecker: ((headers: Record<string, string | undefined>, body: string) => string[]) | null = null;

function buildWebhookChecker(): typeof webhookChecker {
  const { doc, validator: compile } = loadDocument<Document & { webhooks: Record<string, WebhookOperation> }>();
  const byType = new Map(
    Object.entries(doc.webhooks).map(([type, op]) => [
      type,
      { body: compile(op.post.requestBody.content!['application/json'].schema), headers: op.post.parameters.map((p) => ({ ...p, check: compile(p.schema) })) },
    ]),
  );
  return (headers, body) => {
    let message: { type?: unknown };
    try {
      message = JSON.parse(body) as { type?: unknown };
    } catch {
      return [`webhook: the body is not JSON: ${body.slice(0, 200)}`];
    }
    const type = String(message.type);
    const declared = byType.get(type);
    if (declared === undefined) return [`webhook: the document declares no message of type ${JSON.stringify(message.type)}`];
    const problems: string[] = [];
    for (const header of declared.headers) {
      const value = headers[header.name];
      if (value === undefined) problems.push(`webhook ${type}: header ${header.name} is missing`);
      else if (!header.check(value)) problems.push(`webhook ${type}: header ${header.name}: ${JSON.stringify(value)} ${ajvText(header.check)}`);
    }
    if (!declared.body(message)) problems.push(`webhook ${type}: the body ${body.slice(0, 300)} ${ajvText(declared.body)}`);
    return problems;
  };
}

/** Builds the webhook check (the document and its compiled schemas) ahead of the first message. */
export function prepareWebhookCheck(): void {
  webhookChecker ??= buildWebhookChecker();
}

/** The ways a webhook message (its headers and body) departs from the document's `webhooks` (none: it matches). */
export function webhookProblems(headers: Record<string, string | undefined>, body: string): string[] {
  webhookChecker ??= buildWebhookChecker();
  return webhookChecker!(headers, body);
}

/** The ways a v1 response departs from the OpenAPI document (none: it matches). */
export function openApiProblems(method: string, url: string, status: number, headers: Headers, text: string): string[] {
  checker ??= build();
  return checker!(method, url, status, headers, text);
}

/** Throws, naming every departure, when a v1 response does not match the OpenAPI document. */
export function assertMatchesOpenApi(method: string, url: string, status: number, headers: Headers, text: string): void {
  const problems = openApiProblems(method, url, status, headers, text);
  if (problems.length > 0) throw new Error(`The response does not match docs/openapi.json:\n${problems.join('\n')}`);
}
