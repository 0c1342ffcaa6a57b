/**
 * Where a user's memory lives. Every key starts with the user's own prefix; per-user
 * isolation in S3 and DynamoDB is this prefix plus a check on every read path.
 */
export const pad = (n: number): string => String(n).padStart(10, '0');

export const userPrefix = (userId: string): string => `users/${userId}/`;
export const turnDocKey = (userId: string, turnId: number, contentHash: string): string =>
  `${userPrefix(userId)}turns/${pad(turnId)}/${contentHash}.md`;
export const stagingPrefix = (userId: string): string => `${userPrefix(userId)}Knowledge_staging/`;
export const knowledgePrefix = (userId: string): string => `${userPrefix(userId)}Knowledge/`;
/** One version of the user's knowledge index snapshot: its number and a hash of its content make it unique. */
export const knowledgeIndexKey = (userId: string, version: number, contentHash: string): string => `${userPrefix(userId)}index/knowledge/${pad(version)}-${contentHash}.json`;
/** A selective-diary entry (seed 004 P3-M3), one per batch that met the impact criteria. */
export const diaryKey = (userId: string, batchId: string): string => `${userPrefix(userId)}diary/${batchId}.md`;
/** An episode's document (seed 004 P3-M4), written by the reflection that reviewed its turn. */
export const episodeKey = (userId: string, turnId: number): string => `${userPrefix(userId)}episodes/${pad(turnId)}.md`;
/** An agent.event's episode (its id starts `ev-`, so it never meets a turn's). */
export const eventEpisodeKey = (userId: string, episodeId: string): string => `${userPrefix(userId)}episodes/${episodeId}.md`;
export const batchLogKey = (userId: string, batchId: string): string =>
  `${userPrefix(userId)}Logs/reflector/${batchId}.json`;
export const batchFailureKey = (userId: string, batchId: string): string =>
  `${userPrefix(userId)}Logs/reflector/failed/${batchId}.json`;
export const runLogKey = (userId: string, runId: string, ext: 'json' | 'md'): string =>
  `${userPrefix(userId)}Logs/sleep-time/${runId}.${ext}`;
export const expiryLogKey = (userId: string, sweptAt: string): string => `${userPrefix(userId)}Logs/expiry/${sweptAt.slice(0, 10)}.json`;
export const modelOutputKey = (userId: string, batchId: string): string =>
  `${userPrefix(userId)}Logs/reflector/${batchId}.model-output.json`;
export const claimKey = (userId: string, turnId: number, hash: string): string => `claims/${userId}/${pad(turnId)}-${hash}.json`;
export const rejectedEventKey = (day: string, source: string, messageId: string): string =>
  `rejected/${day}/${source}/${messageId}.json`;

/**
 * Normalise a path the model cites relative to Knowledge/ (e.g. `Facts/a.md`).
 * Returns null for anything that could leave the user's folder: absolute paths,
 * `..` or `.` segments, backslashes, empty segments, control characters.
 */
export function safeKnowledgePath(path: string): string | null {
  const trimmed = path.trim().replace(/^Knowledge\//, '');
  if (trimmed === '' || trimmed.startsWith('/') || trimmed.includes('\\')) return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting them is the point
  if (/[\u0000-\u001f]/.test(trimmed)) return null;
  const segments = trimmed.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return null;
  return segments.join('/');
}

/** DynamoDB single-table keys. */
export const keys = {
  userPk: (userId: string) => `USER#${userId}`,
  signalSk: 'SIGNAL',
  turnSk: (turnId: number) => `TURN#${pad(turnId)}`,
  /** An agent.event's episode (seed 004 P3-M4), beside the turn index. */
  eventEpisodeSk: (episodeId: string) => `EPISODE#${episodeId}`,
  batchSk: (batchId: string) => `BATCH#${batchId}`,
  stagedSk: (path: string) => `STAGED#${path}`,
  reflectionSk: (id: string) => `REFLECTION#${id}`,
  /** Reflection log: runs sorted by start time. */
  runSk: (kind: string, startedAt: string, runId: string) => `RUN#${kind}#${startedAt}#${runId}`,
  runIdSk: (runId: string) => `RUNID#${runId}`,
  /** Staged-by-day index (GSI gsi1) for the expiry sweep. */
  stagedDayGsiPk: (day: string) => `STAGEDDAY#${day}`,
  settingsSk: 'SETTINGS',
  /** The pointer to the current version of the user's knowledge index snapshot (lib/adapters/knowledge-index.ts). */
  knowledgeIndexSk: 'KNOWLEDGEINDEX',
  /** Activity index (GSI gsi1): the signal state item sits in the partition of the user's last active day. */
  activityGsiPk: (day: string) => `ACTIVITY#${day}`,
  activityGsiSk: (userId: string) => `USER#${userId}`,
  /** Source reliability (seed 002 §9): a domain's counts for all users, in shards (a user's observations go to one)… */
  sourcePk: (domain: string, shard: number) => `SOURCE#${domain}#${shard}`,
  sourceStatsSk: 'STATS',
  /** …and, in the reporting user's partition, a marker per counted observation (turn and position). */
  sourceObservationSk: (key: string) => `SOURCEOBS#${key}`,
  /** The relation graph (lib/domain/relation-graph.ts): adjacency items in the user's partition. */
  edgeSk: (id: string) => `EDGE#${id}`,
  entitySk: (key: string) => `ENTITY#${key}`,
  /** A hygiene log entry: the n-th of one write; a fact's entries are told apart from the graph's of the same sweep. */
  graphLogSk: (entry: { at: string; action: string; fact?: string | undefined }, n: number) =>
    `GRAPHLOG#${entry.at}#${String(n).padStart(4, '0')}#${entry.fact !== undefined ? 'fact-' : ''}${entry.action}`,
} as const;
