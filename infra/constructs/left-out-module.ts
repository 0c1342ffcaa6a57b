/**
 * What a bundle finds in place of a module it leaves out (LEFT_OUT_MODULES in
 * memory-function.ts): the module's code is not in the bundle, and reaching for it throws
 * instead of acting as it would. Called as a function (a default export, zod 3's `object`,
 * `zodToJsonSchema`, the token providers' `fromEnvSigningName` and `nodeProvider`) or
 * constructed (ajv's default export, a class), it throws. The event-stream handler's provider,
 * called when a Bedrock Runtime client is built, returns a handler that throws when used.
 */
export default function leftOut(): never {
  throw new Error(
    'this module is left out of the Lambda bundle (LEFT_OUT_MODULES, infra/constructs/memory-function.ts)',
  );
}

export const eventStreamPayloadHandlerProvider = (): { handle: typeof leftOut } => ({ handle: leftOut });

export { leftOut as fromEnvSigningName, leftOut as nodeProvider, leftOut as object, leftOut as zodToJsonSchema };
