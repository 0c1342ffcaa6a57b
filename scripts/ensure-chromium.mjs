#!/usr/bin/env node
/**
 * The browser test drives Debian's Chromium (Playwright's own browser download does not
 * work here). Run before `npm test`: if /usr/bin/chromium is missing, install Debian's
 * package with apt-get (as root, or through sudo when it needs no password).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (existsSync(CHROMIUM)) process.exit(0);

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const run = (args) =>
  execFileSync(asRoot ? args[0] : 'sudo', asRoot ? args.slice(1) : ['-n', ...args], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
try {
  console.log(`${CHROMIUM} not found: installing Debian's chromium package for the browser test…`);
  run(['apt-get', 'update', '-qq']);
  run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', 'chromium']);
} catch (error) {
  console.error(
    `could not install chromium (${error.message}); install it with \`apt-get install chromium\` or set CHROMIUM_PATH. The browser test will fail without it.`,
  );
}
