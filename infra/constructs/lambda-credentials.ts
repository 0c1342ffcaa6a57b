/**
 * What a function's bundle takes in place of @aws-sdk/credential-provider-node (the SDK
 * clients' default credential chain; aliased in memory-function.ts): the credentials in the
 * environment, and nothing else. Lambda puts the execution role's credentials in every
 * function's environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN: "The
 * access keys obtained from the function's execution role",
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html), and the default
 * chain reads the environment first and stops at the first source that answers
 * (https://docs.aws.amazon.com/sdk-for-javascript/v3/developer-guide/setting-credentials-node.html),
 * so in Lambda the rest of it — SSO, shared profiles, process, web identity, container and
 * instance metadata, with their own clients, about 90 KB of each bundle — is never reached.
 * Only the bundles take this; tests, the local harness and scripts keep the whole chain.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';

/** The chain's entry point as the SDK clients import it (`defaultProvider`), reading the environment alone. */
export const defaultProvider = (init?: Parameters<typeof fromEnv>[0]) => fromEnv(init);
