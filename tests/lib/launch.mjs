// scripts/rg-launch for the Node tests (tests/mcp, tests/browser): the launcher starts the
// server (and mints tokens) and prints one JSON line; this module reads it. No dependency
// beyond Node itself. The launcher ends when this process does (its stdin closes).
import { execFileSync, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const LAUNCH = process.env.RG_LAUNCH ||
  join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'scripts', 'rg-launch');

// A new bearer token (`rg-launch --no-server --token NAME:TENANT:SCOPES`), synchronously.
export function token(bin, tenant, scopes, name = 'test', env = process.env) {
  const out = execFileSync(LAUNCH, ['--no-server', '--bin', bin, '--token', `${name}:${tenant}:${scopes}`],
    { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out.trim().split('\n').pop()).tokens[name];
}

// Starts `rg-launch --bin bin ...args`; resolves, once the server is ready, to
//   { pid, port, url, log, tokens, info, signal(sig), wait(ms), stop(ms) }
// wait resolves to the server's exit status (128+signal when a signal ended it), or null
// when it still runs after ms; stop sends SIGTERM, waits (SIGKILL after ms) and resolves to
// the status. Rejects when the launcher fails (its reason is on stderr).
export function launch(bin, args = [], { env = process.env } = {}) {
  const child = spawn(LAUNCH, ['--bin', bin, ...args], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  let status = null;
  const onExit = [];
  return new Promise((resolve, reject) => {
    let info = null;
    child.once('exit', (code) => {
      if (!info) reject(new Error(`rg-launch ${args.join(' ')} failed (status ${code})`));
      if (status === null) status = code ?? 1; // the launcher ends with the server's status
      onExit.forEach((f) => f());
    });
    lines.on('line', (line) => {
      const doc = JSON.parse(line);
      if (info) {
        status = doc.exit;
        return;
      }
      info = doc;
      const running = () => status === null && child.exitCode === null;
      const wait = (ms) => new Promise((res) => {
        if (!running()) return res(status);
        const t = setTimeout(() => res(null), ms);
        onExit.push(() => { clearTimeout(t); res(status); });
      });
      resolve({
        pid: info.pid, port: info.port, url: info.url, log: info.log, tokens: info.tokens, info,
        signal: (sig) => { if (running()) process.kill(info.pid, sig); },
        wait,
        async stop(ms = 20000) {
          if (!running()) return status;
          process.kill(info.pid, 'SIGTERM');
          const st = await wait(ms);
          if (st !== null) return st;
          process.kill(info.pid, 'SIGKILL');
          return wait(30000);
        },
      });
    });
  });
}
