// The child's environment: process.env, the caller's env merged over it (or
// alone with extendEnv: false), and the PATH the program is looked up in.
import { isMainThread } from 'node:worker_threads';
import { binding } from '../binding/binding';
import { checkString, describe } from '../util/validate';

export function buildEnv(
  env: Readonly<Record<string, string | undefined>> | undefined,
  extendEnv: boolean,
): { envp: string[] | null; searchPath: string | null } {
  if (env === undefined && extendEnv && isMainThread && binding.envLocked) {
    // The real environ is process.env on the main thread: the addon copies it
    // once, under Node's environment lock, and shares the copy while environ
    // is unchanged. Without that lock (an embedder that hides it) the copy
    // below is taken instead: each read of process.env holds the lock.
    return { envp: null, searchPath: null };
  }
  if (env !== undefined && (env === null || typeof env !== 'object' || Array.isArray(env))) {
    throw new TypeError(`env must be an object of strings, got ${describe(env)}`);
  }
  // A Map, not an object: `__proto__`, `constructor` or `toString` are
  // ordinary variable names, and assigning `__proto__` on an object would
  // set its prototype and drop the variable.
  const merged = new Map<string, string>();
  if (extendEnv) {
    for (const key of Object.keys(process.env)) {
      const value = process.env[key];
      if (value !== undefined) merged.set(key, value);
    }
  }
  if (env !== undefined) {
    for (const key of Object.keys(env)) {
      const value = env[key];
      if (key === '' || key.includes('=') || key.includes('\0')) {
        throw new TypeError(`env: bad variable name ${JSON.stringify(key)}`);
      }
      if (value === undefined) merged.delete(key);
      else merged.set(key, checkString(value, `env.${key}`));
    }
  }
  const envp: string[] = [];
  for (const [key, value] of merged) envp.push(`${key}=${value}`);
  // Like Node: the lookup uses the child's PATH when env is given; without a
  // PATH there, the C side searches /bin:/usr/bin.
  const searchPath = env !== undefined ? (merged.get('PATH') ?? null) : (process.env.PATH ?? null);
  return { envp, searchPath };
}
