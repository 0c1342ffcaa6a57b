/**
 * The memory API's contract: every route with its zod schemas. The handler validates with
 * them and the OpenAPI document (/openapi.json) is generated from them, so the two cannot
 * drift apart. `POST /v1/users/{userId}/memory/search` is a fixed contract: tools outside
 * this repository call it.
 *
 * The routes are kept by group in contract/ (memory, reflections, knowledge, users); this
 * module joins them in the order the router and the OpenAPI document list them.
 */
import { knowledgeRoutes } from './contract/knowledge.js';
import { memoryRoutes } from './contract/memory.js';
import { reflectionRoutes } from './contract/reflections.js';
import { userRoutes } from './contract/users.js';

export type { Access, Route } from './contract/shared.js';

export const API_VERSION = '1.0.0';

export const routes = [...memoryRoutes, ...reflectionRoutes, ...knowledgeRoutes, ...userRoutes] as const;

export type OperationId = (typeof routes)[number]['operationId'];
