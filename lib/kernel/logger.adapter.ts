import { Logger } from '@aws-lambda-powertools/logger';
import type { Log } from './runtime.port.js';

/** Powertools Logger (structured JSON, Lambda context, sampling) behind the domain's Log port. */
export function createLogger(serviceName: string): { logger: Logger; log: Log } {
  const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? serviceName });
  const log: Log = {
    debug: (message, extra) => (extra ? logger.debug(message, extra) : logger.debug(message)),
    info: (message, extra) => (extra ? logger.info(message, extra) : logger.info(message)),
    warn: (message, extra) => (extra ? logger.warn(message, extra) : logger.warn(message)),
    error: (message, extra) => (extra ? logger.error(message, extra) : logger.error(message)),
  };
  return { logger, log };
}
