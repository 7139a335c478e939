// The error a user sees when no addon loads (issue 10): a wrong platform, musl
// without a toolchain, a binary built for a newer glibc. node-gyp-build's own
// errors ("No native build was found for platform=… abi=…") and raw dlopen
// failures do not say what to do; this one does, and keeps them as `cause`.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** glibc's runtime version (as Node's diagnostic report reads it), musl, or unknown. */
export function describeLibc(): string {
  if (process.platform !== 'linux') return 'no Linux libc';
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  if (header?.glibcVersionRuntime !== undefined) return `glibc ${header.glibcVersionRuntime}`;
  // Node reports a glibc version only when it runs on glibc; musl's loader
  // is the usual other one.
  const arch = process.arch === 'x64' ? 'x86_64' : process.arch === 'arm64' ? 'aarch64' : process.arch;
  return existsSync(`/lib/ld-musl-${arch}.so.1`) ? 'musl' : 'unknown libc (not glibc)';
}

/** Where `noshell build-addon` (node-gyp in native/) leaves the addon it builds. */
export function localBuildPath(root: string): string {
  return path.join(root, 'native', 'build', 'Release', 'noshell.node');
}

/** The platform-arch folders under prebuilds/ that hold a binary: what this copy of the package ships. */
export function shippedPrebuilds(root: string): string[] {
  const dir = path.join(root, 'prebuilds');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((sub) => {
    try {
      return readdirSync(path.join(dir, sub)).some((f) => f.endsWith('.node'));
    } catch {
      return false;
    }
  }).sort();
}

/** Wraps whatever loading the addon threw for the package at `root`. */
export function bindingLoadError(root: string, cause: unknown): Error {
  const prebuilds = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`);
  const local = localBuildPath(root);
  const reason = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
  const found = reason.startsWith('No native build was found')
    ? 'none of them holds a binary for this system'
    : `a binary was found but could not be loaded: ${reason}`;
  const shipped = shippedPrebuilds(root);
  const holds = shipped.length === 0
    ? 'this copy of the package holds no prebuilt binary at all'
    : `this copy of the package holds prebuilt binaries for ${shipped.join(', ')} (glibc >= 2.28)`;
  const message = [
    `noshell: cannot load its native addon on ${process.platform}-${process.arch}, ${describeLibc()} ` +
      `(Node ${process.version}, N-API ${process.versions.napi ?? '?'}).`,
    `Looked for a prebuilt binary in ${prebuilds}${path.sep} (${holds}) ` +
      `and for one built from source in ${local}: ${found}.`,
    'To build it from source, install a C/C++ toolchain and python3 (Debian/Ubuntu: apt-get install build-essential python3; ' +
      'Alpine: apk add build-base python3), then run: npx noshell build-addon',
  ].join('\n');
  return new Error(message, { cause });
}
