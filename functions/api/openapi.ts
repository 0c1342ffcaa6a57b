/** The OpenAPI 3.1 document of the memory API, generated from the zod schemas of contract.ts. */
import * as z from 'zod';
import { API_VERSION, type Route, routes } from './contract.js';

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return rest;
};

const shapeOf = (schema: z.ZodType | undefined): Record<string, z.ZodType> => {
  if (!schema) return {};
  return schema instanceof z.ZodObject ? (schema.shape as Record<string, z.ZodType>) : {};
};

export const ErrorSchema = z.object({
  error: z.object({
    message: z.string(),
    /** For 400: every invalid field, by path. */
    fields: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  }),
});

function operation(route: Route) {
  const parameters = [
    ...Object.entries(shapeOf(route.params)).map(([name, s]) => ({
      name,
      in: 'path',
      required: true,
      schema: jsonSchema(s, 'input'),
    })),
    ...Object.entries(shapeOf(route.query)).map(([name, s]) => ({
      name,
      in: 'query',
      required: !s.safeParse(undefined).success,
      schema: jsonSchema(s, 'input'),
    })),
  ];
  const error = (description: string) => ({
    description,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  });
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(route.body, 'input') } } },
        }
      : {}),
    responses: {
      '200': {
        description: 'OK',
        content: { [route.produces ?? 'application/json']: { schema: jsonSchema(route.response, 'output') } },
      },
      ...(route.access === 'public'
        ? {}
        : {
            '400': error('Invalid request: every invalid field is named'),
            '401': error('No valid credential'),
            '403': error('The credential may not do this for this user'),
            '404': error('Not found'),
            '409': error('Conflicts with the item as it is'),
          }),
    },
    ...(route.access === 'public' ? { security: [] } : {}),
  };
}

export function openApiDocument(serverUrl?: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes as readonly Route[]) {
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, unknown>)[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Reflective memory API',
      version: API_VERSION,
      description:
        "Search, save and retrieve an agent user's memory; tiers, scope trust, summaries, sleep-time runs and the review of staged knowledge. Every /v1 route needs `Authorization: Bearer <token>`; a credential acts only on the users it names, and GLOBAL is read-only to users.",
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: { Error: jsonSchema(ErrorSchema, 'output') },
    },
  };
}
