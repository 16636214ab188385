import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/errors/catalogue.js';
import { API_ROUTES, routeMethods } from '../../src/http/v1/routes.js';
import { openApiText } from '../../src/http/v1/openapi.js';

describe('OpenAPI document', () => {
  it('docs/openapi.json is the document the schemas generate (run `npm run openapi` when this fails)', () => {
    const committed = readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8');
    expect(committed).toBe(openApiText());
  });

  it('documents every customer endpoint and the error codes of the catalogue', () => {
    const doc = JSON.parse(openApiText());
    expect(doc.openapi).toBe('3.1.0');
    const order = doc.paths['/api/v1/order'].post;
    expect(order.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/OrderBody');
    expect(doc.components.schemas.OrderBody.additionalProperties).toBe(false);
    const described = JSON.stringify(doc.paths);
    for (const code of ['AUTH', 'BANNED', 'RATE', 'BALANCE', 'SERVICE', 'QTY', 'FORCEJOIN', 'VALIDATION', 'NOT_FOUND', 'IDEMPOTENCY', 'UNAVAILABLE']) {
      expect(described).toContain(`${code}: ${ERRORS[code as keyof typeof ERRORS].meaning}`);
    }
  });

  it('documents exactly the routes the customer API serves, each with its method', () => {
    const doc = JSON.parse(openApiText()) as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths).map(([path, ops]) => `${Object.keys(ops).sort().join(',')} ${path}`).sort();
    const served = Object.entries(API_ROUTES).map(([path, methods]) => `${[...routeMethods(methods)].sort().join(',')} ${path}`).sort();
    expect(documented).toEqual(served);
  });
});
